// The event-driven server on loopback, driven by raw sockets: what a
// client sends byte by byte, and what hostile clients cannot do to others.
#include "http/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "http/testing/raw_connection.h"

namespace berth::http {
namespace {

using namespace std::chrono_literals;
using testing::BodyOf;
using testing::RawConnection;
using testing::StatusLine;

class HttpServerTest : public ::testing::Test {
 protected:
  // Routes: GET /echo/(\w+) echoes its group and ?q; POST /body answers with
  // the body's size; POST /guarded admits only "Authorization: yes".
  void Serve(Limits limits = {}, int workers = 4) {
    Router router;
    router.Get(R"(/echo/(\w+))", [](const Request& request, Response& response) {
      response.SetContent(request.matches[1] + "|" + request.Param("q"), "text/plain");
    });
    router.Post("/body", [this](const Request& request, Response& response) {
      ++bodies_handled_;
      response.SetContent("size=" + std::to_string(request.body.size()), "text/plain");
    });
    router.Post(
        "/guarded",
        [this](const Request& request, Response& response) {
          ++bodies_handled_;
          response.SetContent("in:" + std::any_cast<std::string>(request.context), "text/plain");
        },
        [](Request& request, Response& response) {
          if (request.Header("authorization") != "yes") {
            response.status = 401;
            response.SetContent("no\n", "text/plain");
            return false;
          }
          request.context = std::string("admitted");
          return true;
        });
    router.Get("/block", [this](const Request&, Response& response) {
      std::unique_lock lock(mutex_);
      ++blocked_;
      changed_.notify_all();
      changed_.wait_for(lock, 10s, [this] { return released_; });
      response.SetContent("unblocked", "text/plain");
    });
    router.Add(
        "GET", "/reserved",
        [](const Request&, Response& response) { response.SetContent("reserved", "text/plain"); },
        {}, Workers::kReserved);
    ServerOptions options;
    options.limits = limits;
    options.workers = workers;
    options.reserved_workers = 1;
    auto server = Server::Start(options, std::move(router));
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
  }

  void TearDown() override {
    {
      std::lock_guard lock(mutex_);
      released_ = true;
    }
    changed_.notify_all();
    if (server_) server_->Stop();
  }

  std::string Exchange(const std::string& request) {
    RawConnection connection(server_->port());
    EXPECT_TRUE(connection.Send(request));
    return connection.ReadResponse();
  }

  std::unique_ptr<Server> server_;
  std::atomic<int> bodies_handled_{0};
  std::mutex mutex_;
  std::condition_variable changed_;
  int blocked_ = 0;
  bool released_ = false;
};

TEST_F(HttpServerTest, RoutesByPathGroupAndDecodedQuery) {
  Serve();
  const std::string response =
      Exchange("GET /echo/abc?q=a%20b+c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusLine(response), "HTTP/1.1 200 OK");
  EXPECT_EQ(BodyOf(response), "abc|a b c");
}

TEST_F(HttpServerTest, UnknownPathIs404AndWrongMethod405) {
  Serve();
  EXPECT_EQ(StatusLine(Exchange("GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n")),
            "HTTP/1.1 404 Not Found");
  EXPECT_EQ(StatusLine(Exchange("DELETE /echo/abc HTTP/1.1\r\nHost: x\r\n\r\n")),
            "HTTP/1.1 405 Method Not Allowed");
}

TEST_F(HttpServerTest, KeepsAliveAcrossRequests) {
  Serve();
  RawConnection connection(server_->port());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        connection.Send("GET /echo/n" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_EQ(BodyOf(connection.ReadResponse()), "n" + std::to_string(i) + "|");
  }
}

TEST_F(HttpServerTest, RepeatedContentLengthIs400EvenWhenEqual) {
  Serve();
  for (const char* lengths :
       {"Content-Length: 4\r\nContent-Length: 4\r\n", "Content-Length: 4\r\nContent-Length: 5\r\n",
        "Content-Length: 4, 4\r\n"}) {
    const std::string response =
        Exchange(std::string("POST /body HTTP/1.1\r\nHost: x\r\n") + lengths + "\r\nabcde");
    EXPECT_EQ(StatusLine(response), "HTTP/1.1 400 Bad Request") << lengths;
    EXPECT_NE(BodyOf(response).find("Content-Length"), std::string::npos) << lengths;
  }
  EXPECT_EQ(bodies_handled_, 0);
}

TEST_F(HttpServerTest, PostWithoutBodyOrLengthHasAnEmptyBody) {
  Serve();
  const std::string response = Exchange("POST /body HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(StatusLine(response), "HTTP/1.1 200 OK");
  EXPECT_EQ(BodyOf(response), "size=0");
}

TEST_F(HttpServerTest, ChunkedBodyPastTheLimitIs413AndNeverHandled) {
  Limits limits;
  limits.max_body_bytes = 1000;
  Serve(limits);
  RawConnection connection(server_->port());
  ASSERT_TRUE(
      connection.Send("POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"));
  const std::string chunk = "400\r\n" + std::string(1024, 'x') + "\r\n";
  // The client goes on sending; the answer comes once the limit is past.
  connection.Send(chunk);
  connection.Send(chunk);
  const std::string response = connection.ReadResponse();
  EXPECT_EQ(StatusLine(response), "HTTP/1.1 413 Payload Too Large");
  EXPECT_EQ(bodies_handled_, 0);
}

TEST_F(HttpServerTest, LengthPastTheLimitIs413FromTheHeadAlone) {
  Serve();
  const std::string response =
      Exchange("POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 300000000\r\n\r\n");
  EXPECT_EQ(StatusLine(response), "HTTP/1.1 413 Payload Too Large");
  EXPECT_EQ(bodies_handled_, 0);
}

TEST_F(HttpServerTest, ChunkedBodyWithinTheLimitIsHandled) {
  Serve();
  const std::string response = Exchange(
      "POST /body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n");
  EXPECT_EQ(BodyOf(response), "size=8");
}

TEST_F(HttpServerTest, HeadersPastTheLimitAre431) {
  Limits limits;
  limits.max_header_bytes = 2048;
  Serve(limits);
  const std::string response =
      Exchange("GET /echo/a HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4096, 'y') + "\r\n\r\n");
  EXPECT_EQ(StatusLine(response), "HTTP/1.1 431 Request Header Fields Too Large");
}

TEST_F(HttpServerTest, RequestSentOneBytePerWrite) {
  Serve();
  RawConnection connection(server_->port());
  const std::string request =
      "POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world";
  for (char byte : request) {
    ASSERT_TRUE(connection.Send(std::string(1, byte)));
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(BodyOf(connection.ReadResponse()), "size=11");
}

TEST_F(HttpServerTest, RefusedBeforeTheBodyIsRead) {
  Serve();
  RawConnection connection(server_->port());
  // A body announced and never sent: answered from the head alone.
  ASSERT_TRUE(
      connection.Send("POST /guarded HTTP/1.1\r\nHost: x\r\nContent-Length: 900000\r\n\r\n"));
  const std::string response = connection.ReadResponse();
  EXPECT_EQ(StatusLine(response), "HTTP/1.1 401 Unauthorized");
  EXPECT_EQ(bodies_handled_, 0);
  connection.ReadUntilClosed();
  EXPECT_TRUE(connection.closed());  // the rest of that body is never read
}

TEST_F(HttpServerTest, AdmittedRequestCarriesWhatAdmissionLearned) {
  Serve();
  const std::string response = Exchange(
      "POST /guarded HTTP/1.1\r\nHost: x\r\nAuthorization: yes\r\nContent-Length: 2\r\n\r\nhi");
  EXPECT_EQ(BodyOf(response), "in:admitted");
}

TEST_F(HttpServerTest, ASmallBodyIsReadFirstAndStillRefusedWithoutAdmission) {
  Serve();
  RawConnection connection(server_->port());
  ASSERT_TRUE(connection.Send(
      "POST /guarded HTTP/1.1\r\nHost: x\r\nAuthorization: no\r\nContent-Length: 2\r\n\r\nhi"));
  EXPECT_EQ(StatusLine(connection.ReadResponse()), "HTTP/1.1 401 Unauthorized");
  EXPECT_EQ(bodies_handled_, 0);
  // The body was read whole: the connection goes on.
  ASSERT_TRUE(connection.Send("GET /echo/next HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(BodyOf(connection.ReadResponse()), "next|");
}

TEST_F(HttpServerTest, ExpectContinueIsAnsweredOnlyAfterAdmission) {
  Serve();
  RawConnection refused(server_->port());
  ASSERT_TRUE(
      refused.Send("POST /guarded HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                   "Content-Length: 5\r\n\r\n"));
  EXPECT_EQ(StatusLine(refused.ReadResponse()), "HTTP/1.1 401 Unauthorized");

  RawConnection admitted(server_->port());
  ASSERT_TRUE(
      admitted.Send("POST /guarded HTTP/1.1\r\nHost: x\r\nAuthorization: yes\r\n"
                    "Expect: 100-continue\r\nContent-Length: 5\r\n\r\n"));
  EXPECT_EQ(StatusLine(admitted.ReadResponse()), "HTTP/1.1 100 Continue");
  ASSERT_TRUE(admitted.Send("hello"));
  EXPECT_EQ(BodyOf(admitted.ReadResponse()), "in:admitted");
}

TEST_F(HttpServerTest, SlowHeadIsCutOffAtTheHeaderTimeout) {
  Limits limits;
  limits.header_timeout = 300ms;
  Serve(limits);
  RawConnection connection(server_->port());
  // One byte now and then, never a whole head.
  bool cut = false;
  for (int i = 0; i < 40 && !cut; ++i) {
    cut = !connection.Send("G");
    connection.ReadUntilClosed(100ms);
    cut = cut || connection.closed();
  }
  EXPECT_TRUE(cut);
}

TEST_F(HttpServerTest, BodyThatStopsComingIsCutAtTheBodyTimeout) {
  Limits limits;
  limits.body_timeout = 300ms;
  Serve(limits);
  RawConnection connection(server_->port());
  ASSERT_TRUE(connection.Send("POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc"));
  EXPECT_EQ(connection.ReadUntilClosed(), "");
  EXPECT_TRUE(connection.closed());
  EXPECT_EQ(bodies_handled_, 0);
}

TEST_F(HttpServerTest, AnIdleKeptAliveConnectionIsClosedAfterTheIdleTimeout) {
  Limits limits;
  limits.idle_timeout = 300ms;
  Serve(limits);
  RawConnection connection(server_->port());
  ASSERT_TRUE(connection.Send("GET /echo/a HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(BodyOf(connection.ReadResponse()), "a|");
  connection.ReadUntilClosed();
  EXPECT_TRUE(connection.closed());
}

TEST_F(HttpServerTest, ConnectionsPastTheTotalLimitAreRefused) {
  Limits limits;
  limits.max_connections = 2;
  Serve(limits);
  RawConnection first(server_->port());
  RawConnection second(server_->port());
  for (int i = 0; i < 100 && server_->connections() < 2; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(server_->connections(), 2U);
  RawConnection third(server_->port());
  EXPECT_EQ(StatusLine(third.ReadResponse()), "HTTP/1.1 503 Service Unavailable");
}

TEST_F(HttpServerTest, ConnectionsPastThePerAddressLimitAreRefused) {
  Limits limits;
  limits.max_connections_per_address = 3;
  Serve(limits);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 3; ++i) held.push_back(std::make_unique<RawConnection>(server_->port()));
  for (int i = 0; i < 100 && server_->connections() < 3; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(server_->connections(), 3U);
  RawConnection extra(server_->port());
  EXPECT_EQ(StatusLine(extra.ReadResponse()), "HTTP/1.1 503 Service Unavailable");
  held.pop_back();  // one closes: room again
  for (int i = 0; i < 100 && server_->connections() > 2; ++i) std::this_thread::sleep_for(10ms);
  RawConnection next(server_->port());
  ASSERT_TRUE(next.Send("GET /echo/ok HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(BodyOf(next.ReadResponse()), "ok|");
}

TEST_F(HttpServerTest, ReservedRoutesAnswerWhileEverySharedWorkerIsBusy) {
  Serve(Limits{}, /*workers=*/2);
  std::vector<std::unique_ptr<RawConnection>> blockers;
  for (int i = 0; i < 2; ++i) {
    blockers.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(blockers.back()->Send("GET /block HTTP/1.1\r\nHost: x\r\n\r\n"));
  }
  {
    std::unique_lock lock(mutex_);
    ASSERT_TRUE(changed_.wait_for(lock, 10s, [this] { return blocked_ == 2; }));
  }
  EXPECT_EQ(BodyOf(Exchange("GET /reserved HTTP/1.1\r\nHost: x\r\n\r\n")), "reserved");
}

TEST_F(HttpServerTest, ManyIdleConnectionsCostNoWorker) {
  Serve(Limits{}, /*workers=*/2);
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 200; ++i) {
    idle.push_back(std::make_unique<RawConnection>(server_->port()));
    idle.back()->Send("GET /echo/");  // an unfinished head
  }
  EXPECT_EQ(BodyOf(Exchange("GET /echo/alive HTTP/1.1\r\nHost: x\r\n\r\n")), "alive|");
}

}  // namespace
}  // namespace berth::http
