// ProcessProgram with real processes. The programs are small /bin/sh scripts: a test fixture's
// convenience; the product itself never runs a shell.

#include "runtime/process_program.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "protocol/gen/methods.hpp"

namespace escouade::runtime {
namespace {

namespace asio = boost::asio;

bool process_exists(int pid) {
  return std::filesystem::exists("/proc/" + std::to_string(pid));
}

// A pid whose /proc entry is gone or a zombie.
bool process_gone(int pid) {
  std::error_code ec;
  auto stat = std::filesystem::path("/proc/" + std::to_string(pid) + "/stat");
  if (!std::filesystem::exists(stat, ec)) return true;
  FILE* f = std::fopen(stat.c_str(), "r");
  if (!f) return true;
  char buf[512] = {};
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  std::string s(buf, n);
  auto close = s.rfind(')');
  return close != std::string::npos && close + 2 < s.size() && s[close + 2] == 'Z';
}

class ProcessProgramTest : public ::testing::Test {
 protected:
  // As the host does: what a dead plugin leaves behind comes to this process.
  void SetUp() override { ASSERT_TRUE(platform::become_subreaper()); }

  std::unique_ptr<ProcessProgram> make(std::string script, std::string id = "dev.test.plugin") {
    ProgramSpec spec;
    spec.plugin_id = id;
    spec.command = {"/bin/sh", "-c", std::move(script)};
    spec.folder = std::filesystem::temp_directory_path();
    spec.env = {"PATH=/usr/bin:/bin", "ESCOUADE_PLUGIN_ID=" + id};
    return std::make_unique<ProcessProgram>(io_.get_executor(), spec, context_);
  }

  ProgramEvents events() {
    ProgramEvents e;
    e.output_line = [this](std::string_view l) { out_.emplace_back(l); };
    e.error_line = [this](std::string_view l) { err_.emplace_back(l); };
    e.output_too_long = [this](std::size_t) { ++too_long_; };
    e.exited = [this](const ProgramEnd& end) { exit_ = end.status; };
    return e;
  }

  template <class P>
  void run_until(P done) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done() && std::chrono::steady_clock::now() < limit) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(done());
  }

  asio::io_context io_;
  ProcessContext context_;
  std::vector<std::string> out_, err_;
  int too_long_ = 0;
  std::optional<ExitStatus> exit_;
};

TEST_F(ProcessProgramTest, LinesInAndOutStderrApartAndTheExit) {
  auto p = make(R"(read line; echo "got $line"; echo "to stderr" >&2; exit 3)");
  ASSERT_TRUE(p->start(events()));
  ASSERT_TRUE(p->pid());
  p->write("hello\n", proto::Delivery::kept);
  run_until([&] { return exit_.has_value(); });
  EXPECT_EQ(out_, std::vector<std::string>{"got hello"});
  EXPECT_EQ(err_, std::vector<std::string>{"to stderr"});
  EXPECT_EQ(exit_->code, 3);
  EXPECT_EQ(exit_->describe(), "exit code 3");
  EXPECT_FALSE(p->pid());
}

// Its last lines and the end of its output reach the host together, after it exited: the read
// that takes the lines empties the pipe, epoll does not report the end again, and its exit is
// what makes the host read on (pipe_reader.hpp). Everything comes, then the exit, without the
// linger that bounds a wait for pipes held by something else (an hour here: run_until's safety
// bound would end the test first).
TEST_F(ProcessProgramTest, LastLinesWrittenBeforeTheHostLooksComeBeforeTheExit) {
  context_.linger = std::chrono::hours(1);
  for (int round = 0; round < 5; ++round) {
    out_.clear();
    exit_.reset();
    auto p = make(R"(echo one; echo two; exit 4)");
    ASSERT_TRUE(p->start(events()));
    const int pid = *p->pid();
    for (int i = 0; i < 20000 && !process_gone(pid); ++i)
      ::usleep(1000);
    ASSERT_TRUE(process_gone(pid));
    run_until([&] { return exit_.has_value(); });
    EXPECT_EQ(out_, (std::vector<std::string>{"one", "two"}));
    EXPECT_EQ(exit_->code, 4);
  }
}

TEST_F(ProcessProgramTest, RunsInItsFolderWithItsEnvironment) {
  auto p = make(R"(pwd; echo "$ESCOUADE_PLUGIN_ID")");
  ASSERT_TRUE(p->start(events()));
  run_until([&] { return exit_.has_value(); });
  ASSERT_EQ(out_.size(), 2u);
  EXPECT_EQ(std::filesystem::path(out_[0]),
            std::filesystem::canonical(std::filesystem::temp_directory_path()));
  EXPECT_EQ(out_[1], "dev.test.plugin");
}

TEST_F(ProcessProgramTest, KilledBySignal) {
  auto p = make("kill -9 $$");
  ASSERT_TRUE(p->start(events()));
  run_until([&] { return exit_.has_value(); });
  EXPECT_EQ(exit_->signal, 9);
  EXPECT_EQ(exit_->describe(), "killed by signal 9 (SIGKILL)");
}

TEST_F(ProcessProgramTest, StopEndsTheTreeWithASetsidGrandchild) {
  auto p = make(R"(setsid sh -c 'echo $$; exec sleep 1000' & sleep 1000)");
  ASSERT_TRUE(p->start(events()));
  run_until([&] { return !out_.empty(); });
  const int grandchild = std::stoi(out_[0]);
  ASSERT_TRUE(process_exists(grandchild));
  auto memory = p->memory_bytes();
  ASSERT_TRUE(memory);
  EXPECT_GT(*memory, 0u);
  p->stop();
  run_until([&] { return exit_.has_value(); });
  EXPECT_EQ(exit_->signal, SIGKILL);
  run_until([&] { return process_gone(grandchild); });
}

TEST_F(ProcessProgramTest, ExitIsSeenEvenWhenSomethingItStartedHoldsItsOutput) {
  // The background sleep keeps stdout open; the exit must still come, and the orphan end.
  auto p = make(R"(sh -c 'echo $$; exec sleep 1000' & sleep 0.2; echo bye; exit 0)");
  ASSERT_TRUE(p->start(events()));
  run_until([&] { return exit_.has_value(); });
  ASSERT_EQ(out_.size(), 2u);
  EXPECT_EQ(out_[1], "bye");
  EXPECT_EQ(exit_->code, 0);
  run_until([&] { return process_gone(std::stoi(out_[0])); });
}

TEST_F(ProcessProgramTest, LongStderrComesInPiecesAndTheLastLineWithoutNewline) {
  auto p = make(R"(head -c 40000 /dev/zero | tr '\0' x >&2; printf 'tail' >&2)");
  ASSERT_TRUE(p->start(events()));
  run_until([&] { return exit_.has_value(); });
  std::size_t total = 0;
  for (const auto& l : err_)
    total += l.size();
  EXPECT_EQ(total, 40004u);
  EXPECT_GE(err_.size(), 3u);
  EXPECT_EQ(err_.back().substr(err_.back().size() - 4), "tail");
}

// Each answer after a pause wakes the loop again, and a burst past the 64 KiB read buffer is
// read whole, in order.
TEST_F(ProcessProgramTest, AnswersAfterEachPauseAndABurstLargerThanTheBufferAllArrive) {
  auto p = make(R"(i=0; while [ $i -lt 50 ]; do read line; echo "got $line"; i=$((i+1)); done; )"
                R"(head -c 200000 /dev/zero | tr '\0' y; echo; echo end)");
  ASSERT_TRUE(p->start(events()));
  for (int i = 0; i < 50; ++i) {
    p->write("line " + std::to_string(i) + "\n", proto::Delivery::kept);
    run_until([&] { return out_.size() == static_cast<std::size_t>(i) + 1; });
    EXPECT_EQ(out_.back(), "got line " + std::to_string(i));
  }
  run_until([&] { return exit_.has_value(); });
  ASSERT_EQ(out_.size(), 52u);
  EXPECT_EQ(out_[50], std::string(200000, 'y'));
  EXPECT_EQ(out_[51], "end");
}

// Lines queued faster than one write takes (256 KiB at most a write, in the room the last one
// kept) all reach the program whole and in order, a long one among them.
TEST_F(ProcessProgramTest, ABurstOfManyWritesWorthOfLinesArrivesWholeAndInOrder) {
  auto p = make("exec cat");
  ASSERT_TRUE(p->start(events()));
  std::vector<std::string> sent;
  for (int i = 0; i < 20000; ++i) {
    std::string line = "line " + std::to_string(i) + " " + std::string(i % 173, 'a' + i % 26);
    if (i == 7000) line += std::string(300000, 'z');  // longer than the room kept
    sent.push_back(line);
    p->write(line + "\n", proto::Delivery::kept);
  }
  run_until([&] { return out_.size() == sent.size(); });
  EXPECT_EQ(out_, sent);
  EXPECT_EQ(p->input_backlog(), 0u);
  p->stop();
  run_until([&] { return exit_.has_value(); });
}

// Lines shared with other programs (a fact for several plugins) go out among the others, whole
// and in order, to each program, and stay as they were for the rest.
TEST_F(ProcessProgramTest, SharedLinesArriveAmongTheOthersInOrderToEachProgram) {
  auto a = make("exec cat");
  auto b = make("exec cat");
  ASSERT_TRUE(a->start(events()));
  std::vector<std::string> b_out;
  bool b_ended = false;
  ProgramEvents b_events = events();
  b_events.output_line = [&](std::string_view l) { b_out.emplace_back(l); };
  b_events.exited = [&](const ProgramEnd&) { b_ended = true; };
  ASSERT_TRUE(b->start(std::move(b_events)));
  std::vector<std::string> facts;
  std::vector<std::string> sent;
  for (int i = 0; i < 5000; ++i) {
    std::string line = "fact " + std::to_string(i) + " " + std::string(i % 97, 'f');
    auto shared = std::make_shared<const std::string>(line + "\n");
    a->write_shared(shared, proto::Delivery::droppable);
    b->write_shared(shared, proto::Delivery::droppable);
    sent.push_back(line);
    facts.push_back(line);
    if (i % 10 == 0) {
      sent.push_back("kept " + std::to_string(i));
      a->write(sent.back() + "\n", proto::Delivery::kept);
    }
    EXPECT_EQ(*shared, line + "\n");
  }
  run_until([&] { return out_.size() == sent.size() && b_out.size() == facts.size(); });
  EXPECT_EQ(out_, sent);
  EXPECT_EQ(b_out, facts);
  a->stop();
  b->stop();
  run_until([&] { return exit_.has_value() && b_ended; });
}

TEST_F(ProcessProgramTest, OversizedOutputLineIsDroppedAndTheNextOneComes) {
  context_.max_line_bytes = 1024;
  auto p = make(R"(head -c 5000 /dev/zero | tr '\0' y; echo; echo '{"ok":1}')");
  ASSERT_TRUE(p->start(events()));
  run_until([&] { return exit_.has_value(); });
  EXPECT_EQ(too_long_, 1);
  EXPECT_EQ(out_, std::vector<std::string>{R"({"ok":1})"});
}

TEST_F(ProcessProgramTest, AProgramThatCannotStartSaysWhy) {
  ProgramSpec spec;
  spec.plugin_id = "dev.test.missing";
  spec.command = {"./no-such-program"};
  spec.folder = std::filesystem::temp_directory_path();
  ProcessProgram p(io_.get_executor(), spec, context_);
  auto r = p.start(events());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("No such file or directory"), std::string::npos)
      << r.error().message;
}

TEST_F(ProcessProgramTest, WritingToAProgramThatClosedItsInputDoesNotEndTheHost) {
  // As a host that never touched SIGPIPE: the default would end this test process.
  ::signal(SIGPIPE, SIG_DFL);
  auto p = make("exec 0<&-; echo closed; sleep 0.3");
  ASSERT_TRUE(p->start(events()));
  run_until([&] { return !out_.empty(); });
  for (int i = 0; i < 100; ++i)
    p->write(std::string(1000, 'x') + "\n", proto::Delivery::kept);
  run_until([&] { return exit_.has_value(); });
  EXPECT_EQ(exit_->code, 0);
}

TEST_F(ProcessProgramTest, DestroyingARunningProgramEndsIt) {
  auto p = make("echo $$; sleep 1000");
  ASSERT_TRUE(p->start(events()));
  run_until([&] { return !out_.empty(); });
  const int pid = std::stoi(out_[0]);
  p.reset();
  EXPECT_TRUE(process_gone(pid));
  EXPECT_TRUE(context_.known_children.empty());
}

// What the host holds for a plugin that does not read is bounded: its input takes 4 MiB, then
// notifications are dropped (told once), and all is told again once it reads.
TEST_F(ProcessProgramTest, AProgramThatDoesNotReadFillsItsInputThenDrainsIt) {
  const auto folder =
      std::filesystem::temp_directory_path() / ("escouade-backlog-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  auto p =
      make("cd '" + folder.string() + "'; while [ ! -e go ]; do sleep 0.02; done; cat > /dev/null");
  auto e = events();
  std::optional<std::size_t> full_at, dropped;
  e.input_full = [&](std::size_t backlog) { full_at = backlog; };
  e.input_drained = [&](std::size_t n) { dropped = n; };
  ASSERT_TRUE(p->start(std::move(e)));
  const std::string mib(1024 * 1024 - 1, 'x');
  // Answers are never dropped: past the bound, they still wait.
  for (int i = 0; i < 5; ++i)
    p->write(mib + "\n", proto::Delivery::kept);
  // Past the bound, facts are dropped and a kept notification (a timer's firing) waits: the ten
  // facts alone are counted lost.
  for (int i = 0; i < 10; ++i)
    p->write(R"({"jsonrpc":"2.0","method":"events/fact"})"
             "\n",
             proto::method::EventsFact::kDelivery);
  p->write(R"({"jsonrpc":"2.0","method":"timer/fired","params":{"timer":1}})"
           "\n",
           proto::method::TimerFired::kDelivery);
  ASSERT_TRUE(full_at.has_value());
  EXPECT_GT(*full_at, 4u * 1024 * 1024 - 64 * 1024);  // the pipe itself holds 64 KiB
  EXPECT_FALSE(dropped.has_value());

  std::ofstream(folder / "go") << "go\n";
  run_until([&] { return dropped.has_value(); });
  EXPECT_EQ(*dropped, 10u);
  run_until([&] { return p->input_backlog() == 0; });
  p->stop();
  run_until([&] { return exit_.has_value(); });
  std::filesystem::remove_all(folder);
}

// With a TreeEnder the ends run off this thread; a leader started while the orphans of a crash
// are being ended is known at once, and never taken for one of them.
TEST_F(ProcessProgramTest, TheOrphansOfACrashEndOffThisThreadAndANewLeaderIsLeftAlone) {
  TreeEnder ender(io_.get_executor());
  context_.ender = &ender;
  auto crashing = make("setsid sh -c 'echo $$; exec env -i sleep 1000' & sleep 0.2; exit 3");
  std::unique_ptr<ProcessProgram> next;
  auto e = events();
  e.exited = [&](const ProgramEnd& end) {
    exit_ = end.status;
    next = make("echo $$; exec sleep 1000", "dev.test.next");
    ASSERT_TRUE(next->start(events()));  // its output joins out_
  };
  ASSERT_TRUE(crashing->start(std::move(e)));
  run_until([&] { return out_.size() == 2; });
  const int orphan = std::stoi(out_[0]);
  const int leader = std::stoi(out_[1]);
  run_until([&] { return process_gone(orphan); });
  EXPECT_EQ(exit_->code, 3);
  // Still running, and still one of the host's known children.
  EXPECT_FALSE(process_gone(leader));
  EXPECT_TRUE(context_.known_children.count(leader));
  next.reset();  // ended and reaped on the TreeEnder, then forgotten here
  run_until([&] { return context_.known_children.empty(); });
  EXPECT_TRUE(process_gone(leader));
}

// What a request's answer may find when it is read at once (process_program.cpp,
// take_answer_now): the plugin's script writes what the test asks for, then leaves a file
// `ready`; the test writes its line only then, and runs no loop in between, so the reader's own
// read has not taken what waits in the pipe.
class AnswerAtOnceTest : public ProcessProgramTest {
 protected:
  void SetUp() override {
    ProcessProgramTest::SetUp();
    folder_ =
        std::filesystem::temp_directory_path() / ("escouade-at-once-" + std::to_string(::getpid()));
    std::filesystem::remove_all(folder_);
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }

  // Its script waits for "go", runs `before` (what it writes ahead), leaves `ready`, then reads
  // a line and runs `after`, then reads until its input ends.
  std::unique_ptr<ProcessProgram> start(const std::string& before, const std::string& after) {
    auto p = make("cd '" + folder_.string() + "'; read go; " + before + "; : > ready; read line; " +
                  after + "; cat > /dev/null");
    EXPECT_TRUE(p->start(events()));
    p->write("go\n", proto::Delivery::kept);
    wait_ready();
    return p;
  }

  void wait_ready() {
    for (int i = 0; i < 20000 && !std::filesystem::exists(folder_ / "ready"); ++i)
      ::usleep(1000);
    EXPECT_TRUE(std::filesystem::exists(folder_ / "ready"));
  }

  void end(ProcessProgram& p) {
    p.stop();
    run_until([&] { return exit_.has_value(); });
  }

  const std::string request_ = R"({"jsonrpc":"2.0","id":7,"method":"test/echo"})"
                               "\n";
  std::filesystem::path folder_;
};

// The answer is there when the request is written: handed on before write() returns, once, and
// what comes after it still comes through the loop.
TEST_F(AnswerAtOnceTest, AnAnswerAlreadyInThePipeIsHandedOnWhenTheRequestIsWritten) {
  auto p = start(R"(echo '{"jsonrpc":"2.0","id":7,"result":1}')", "echo after");
  p->write(request_, proto::Delivery::kept);
  // Handed on before write() returned; with the line after it too when the script, given the
  // core by the write, wrote that one before the read (a loaded machine).
  ASSERT_FALSE(out_.empty());
  EXPECT_EQ(out_.front(), R"({"jsonrpc":"2.0","id":7,"result":1})");
  run_until([&] { return out_.size() == 2; });
  EXPECT_EQ(out_.back(), "after");
  end(*p);
  EXPECT_EQ(out_.size(), 2u);
}

// A sandbox helper's records are no request line, but write_request says they end with one: its
// answer is read at once as a request line's is; the same bytes given to write() are not.
TEST_F(AnswerAtOnceTest, BytesWrittenAsARequestReadTheAnswerAtOnceWhateverTheirForm) {
  const std::string records = std::string("H\x08\x01\x02\x03") + request_;
  ASSERT_FALSE(is_request_line(records));
  auto p = start(R"(echo '{"jsonrpc":"2.0","id":7,"result":1}')", "echo after");
  p->write_request(records);
  ASSERT_FALSE(out_.empty());
  EXPECT_EQ(out_.front(), R"({"jsonrpc":"2.0","id":7,"result":1})");
  run_until([&] { return out_.size() == 2; });
  end(*p);

  out_.clear();
  exit_.reset();
  std::filesystem::remove(folder_ / "ready");
  auto q = start("echo waiting", "echo after");
  q->write(records, proto::Delivery::kept);
  EXPECT_TRUE(out_.empty());
  run_until([&] { return out_.size() == 2; });
  EXPECT_EQ(out_, (std::vector<std::string>{"waiting", "after"}));
  end(*q);
}

// What the host's requests look like to is_request_line: its id before its method, as
// rpc::Outgoing writes them; answers, notifications and other orders are not requests.
TEST(IsRequestLine, TellsTheHostsRequestsFromEverythingElse) {
  EXPECT_TRUE(is_request_line(R"({"jsonrpc":"2.0","id":12,"method":"permissions/decide"})"));
  EXPECT_FALSE(is_request_line(R"({"jsonrpc":"2.0","id":12,"result":{}})"));
  EXPECT_FALSE(is_request_line(R"({"jsonrpc":"2.0","method":"timer/fired","params":{}})"));
  EXPECT_FALSE(is_request_line(R"({"jsonrpc":"2.0","id":,"method":"x"})"));
  EXPECT_FALSE(is_request_line(R"({"jsonrpc":"2.0","id":"a","method":"x"})"));
  EXPECT_FALSE(is_request_line(R"({"id":1,"jsonrpc":"2.0","method":"x"})"));
  EXPECT_FALSE(is_request_line(""));
}

// Within a burst of requests to several programs (a decision), no answer is read at once: it
// comes through the loop, after every request went out.
TEST_F(AnswerAtOnceTest, WithinABurstOfRequestsTheAnswerComesThroughTheLoop) {
  auto p = start(R"(echo '{"jsonrpc":"2.0","id":7,"result":1}')", "echo after");
  {
    const RequestBurst burst;
    p->write(request_, proto::Delivery::kept);
    EXPECT_TRUE(out_.empty());
  }
  run_until([&] { return out_.size() == 2; });
  EXPECT_EQ(out_.front(), R"({"jsonrpc":"2.0","id":7,"result":1})");
  end(*p);
}

// A burst's requests are held until it ends, then leave together (platform::write_batch): each
// program gets its lines whole and in their order, a line its pipe does not take whole goes on by
// the asynchronous write, and a program destroyed during the burst loses its line, nothing else.
TEST_F(AnswerAtOnceTest, ABurstsRequestsLeaveTogetherWhenItEndsWholeAndInOrder) {
  const std::string wait_go =
      "cd '" + folder_.string() + "'; while [ ! -e go ]; do sleep 0.01; done; ";
  const auto request = [](int id) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"test/echo"})" + "\n";
  };
  const std::string note = R"({"jsonrpc":"2.0","method":"test/note","params":{}})"
                           "\n";
  // Longer than a pipe holds (64 KiB here): the pipe takes part of it when the burst ends.
  const std::string big = R"({"jsonrpc":"2.0","id":40,"method":"test/echo","params":")" +
                          std::string(100 * 1024, 'x') + "\"}\n";
  auto a = make(wait_go + "cat");
  auto b = make(wait_go + "cat");
  auto gone = make(wait_go + "cat");
  auto c = make(wait_go + "head -c " + std::to_string(big.size()) + " | wc -c");
  for (auto* p : {a.get(), b.get(), gone.get(), c.get()})
    ASSERT_TRUE(p->start(events()));
  {
    const RequestBurst burst;
    a->write(request(10), proto::Delivery::kept);
    b->write(request(20), proto::Delivery::kept);
    b->write(note, proto::Delivery::kept);  // behind b's request
    gone->write(request(30), proto::Delivery::kept);
    c->write(big, proto::Delivery::kept);
    EXPECT_EQ(a->input_backlog(), request(10).size()) << "held until the burst ends";
    EXPECT_EQ(b->input_backlog(), request(20).size() + note.size());
    EXPECT_EQ(c->input_backlog(), big.size());
    gone.reset();
  }
  EXPECT_EQ(a->input_backlog(), 0u) << "written as the burst ended";
  EXPECT_EQ(b->input_backlog(), note.size()) << "what waited behind its request goes by the loop";
  EXPECT_GT(c->input_backlog(), 0u) << "its pipe took part of it";
  EXPECT_LT(c->input_backlog(), big.size());
  std::ofstream(folder_ / "go") << "go\n";
  run_until([&] { return out_.size() == 4 && c->input_backlog() == 0; });
  const auto at = [&](const std::string& line) {
    return std::find(out_.begin(), out_.end(), line) - out_.begin();
  };
  const auto bare = [](std::string line) {
    line.pop_back();
    return line;
  };
  EXPECT_LT(at(bare(request(10))), 4);
  EXPECT_LT(at(bare(request(20))), at(bare(note))) << "b's lines in their order";
  EXPECT_LT(at(bare(note)), 4);
  EXPECT_LT(at(std::to_string(big.size())), 4) << "c got the whole of its line";
  EXPECT_EQ(at(bare(request(30))), 4) << "nothing of the destroyed program's";
  for (auto* p : {a.get(), b.get(), c.get()})
    p->stop();
}

// Half a line read at once waits for its end, which the loop's read brings.
TEST_F(AnswerAtOnceTest, HalfAnAnswerReadAtOnceWaitsForTheRestOfItsLine) {
  auto p = start(R"(printf '{"jsonrpc":"2.0","id":7,')", R"(printf '"result":2}\n')");
  p->write(request_, proto::Delivery::kept);
  // Never half a line: nothing yet, or (the script given the core by the write, on a loaded
  // machine, wrote the rest before the read) the whole of it.
  EXPECT_TRUE(out_.empty() ||
              out_ == std::vector<std::string>{R"({"jsonrpc":"2.0","id":7,"result":2})"});
  run_until([&] { return !out_.empty(); });
  EXPECT_EQ(out_, std::vector<std::string>{R"({"jsonrpc":"2.0","id":7,"result":2})"});
  end(*p);
}

// Only a request's line reads at once: after a notification or an answer of the host's, what
// the plugin wrote comes through the loop.
TEST_F(AnswerAtOnceTest, ANotificationOrAnAnswerDoesNotReadAtOnce) {
  auto p = start("echo waiting", "echo after");
  p->write(R"({"jsonrpc":"2.0","method":"timer/fired","params":{"timer":1}})"
           "\n",
           proto::Delivery::kept);
  p->write(R"({"jsonrpc":"2.0","id":3,"result":{}})"
           "\n",
           proto::Delivery::kept);
  EXPECT_TRUE(out_.empty());
  run_until([&] { return out_.size() == 2; });
  EXPECT_EQ(out_, (std::vector<std::string>{"waiting", "after"}));
  end(*p);
}

// A request the pipe does not take whole (its input is full) leaves the rest to the
// asynchronous write and does not read at once; its answer comes through the loop.
TEST_F(AnswerAtOnceTest, ARequestThePipeDoesNotTakeWholeDoesNotReadAtOnce) {
  auto p = make("cd '" + folder_.string() +
                "'; read go; echo answered; : > ready; while [ ! -e drain ]; do sleep 0.02; "
                "done; cat > /dev/null");
  ASSERT_TRUE(p->start(events()));
  p->write("go\n", proto::Delivery::kept);
  wait_ready();
  // Larger than the pipe holds (64 KiB): part of it waits in the host.
  const std::string big = R"({"jsonrpc":"2.0","id":8,"method":"test/echo","params":")" +
                          std::string(256 * 1024, 'x') + "\"}\n";
  p->write(big, proto::Delivery::kept);
  EXPECT_GT(p->input_backlog(), 0u);
  EXPECT_TRUE(out_.empty());
  std::ofstream(folder_ / "drain") << "drain\n";
  run_until([&] { return !out_.empty() && p->input_backlog() == 0; });
  EXPECT_EQ(out_, std::vector<std::string>{"answered"});
  end(*p);
}

// Requests written while others await their answers leave together at the end of the turn, in
// their order; once the answers are in, a request is written at once again.
TEST_F(AnswerAtOnceTest, WhileAnswersAreAwaitedRequestsLeaveAtTheEndOfTheTurn) {
  auto p = make("cd '" + folder_.string() + "'; while [ ! -e go ]; do sleep 0.01; done; cat");
  ASSERT_TRUE(p->start(events()));
  const auto request = [](int id) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"test/echo"})" + "\n";
  };
  p->write(request(1), proto::Delivery::kept);
  EXPECT_EQ(p->input_backlog(), 0u) << "the first is written at once";
  p->write(request(2), proto::Delivery::kept);
  p->write(request(3), proto::Delivery::kept);
  EXPECT_EQ(p->input_backlog(), 2 * request(2).size()) << "the others wait for the turn's end";
  run_until([&] { return p->input_backlog() == 0; });
  EXPECT_TRUE(out_.empty());
  std::ofstream(folder_ / "go") << "go\n";
  run_until([&] { return out_.size() == 3; });
  for (int id = 1; id <= 3; ++id)
    EXPECT_EQ(out_[id - 1] + "\n", request(id));
  p->write(request(4), proto::Delivery::kept);
  EXPECT_EQ(p->input_backlog(), 0u) << "its answers in, a request is written at once again";
  run_until([&] { return out_.size() == 4; });
  EXPECT_EQ(out_.back() + "\n", request(4));
  end(*p);
}

}  // namespace
}  // namespace escouade::runtime
