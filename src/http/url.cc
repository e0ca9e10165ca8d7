// Boost.URL, header-only: its sources are compiled once, here.
#include <boost/url/src.hpp>
