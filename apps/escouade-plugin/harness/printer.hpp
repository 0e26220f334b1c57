#pragma once

// What the harness prints, one line at a time and flushed at once, so that steps, status
// changes and journal lines come out in the order they happened. Colour only when asked (a
// terminal); the text is the same without it.
//
// Thread: the io_context's thread.

#include <ostream>
#include <string>
#include <string_view>

namespace escouade::harness {

class Printer {
 public:
  Printer(std::ostream& out, bool color) : out_(out), color_(color) {}

  // A scenario's comment, as a heading.
  void heading(std::string_view text);
  // A step about to run.
  void step(std::string_view text);
  // What a step gave, under it.
  void outcome(std::string_view text);
  // A line of detail under an outcome (each plugin's part of a decision...).
  void detail(std::string_view text);
  // A step that failed, and why.
  void failure(std::string_view text);
  // A step's expectation that held.
  void passed(std::string_view text);
  // A host/statusChanged notification.
  void status(std::string_view id, std::string_view state, std::string_view reason);
  // A new line of a plugin's journal.
  void journal(std::string_view id, std::string_view line);
  // A line escouade-host wrote on its stderr.
  void host_line(std::string_view line);
  // What the harness says about itself (where the data dir is...).
  void note(std::string_view text);
  // The prompt before a typed line (no line break).
  void prompt();
  // Raw text, as is (help).
  void text(std::string_view text);

 private:
  void line(std::string_view colour, std::string_view prefix, std::string_view text);

  std::ostream& out_;
  bool color_;
};

}  // namespace escouade::harness
