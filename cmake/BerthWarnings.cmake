# Warnings every target of ours gets; -Werror in CI (BERTH_WERROR=ON).
add_library(berth_warnings INTERFACE)
target_compile_options(berth_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
  -Wnon-virtual-dtor -Woverloaded-virtual -Wimplicit-fallthrough)
if(BERTH_WERROR)
  target_compile_options(berth_warnings INTERFACE -Werror)
endif()

if(BERTH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()
