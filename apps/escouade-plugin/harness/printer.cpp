#include "harness/printer.hpp"

namespace escouade::harness {

namespace {

constexpr std::string_view kReset = "\x1b[0m";
constexpr std::string_view kBold = "\x1b[1m";
constexpr std::string_view kDim = "\x1b[2m";
constexpr std::string_view kRed = "\x1b[31m";
constexpr std::string_view kGreen = "\x1b[32m";
constexpr std::string_view kYellow = "\x1b[33m";
constexpr std::string_view kCyan = "\x1b[36m";

std::string_view state_colour(std::string_view state) {
  if (state == "running") return kGreen;
  if (state == "stopped") return kRed;
  return kYellow;
}

}  // namespace

void Printer::line(std::string_view colour, std::string_view prefix, std::string_view text) {
  if (color_ && !colour.empty()) out_ << colour;
  out_ << prefix << text;
  if (color_ && !colour.empty()) out_ << kReset;
  out_ << '\n';
  out_.flush();
}

void Printer::heading(std::string_view text) {
  line(kBold, "== ", std::string(text) + " ==");
}

void Printer::step(std::string_view text) {
  line(kCyan, "> ", text);
}

void Printer::outcome(std::string_view text) {
  line({}, "  ", text);
}

void Printer::detail(std::string_view text) {
  line({}, "    ", text);
}

void Printer::failure(std::string_view text) {
  line(kRed, "  FAILED: ", text);
}

void Printer::passed(std::string_view text) {
  line(kGreen, "  ok: ", text);
}

void Printer::status(std::string_view id, std::string_view state, std::string_view reason) {
  std::string text = std::string(id) + ": " + std::string(state);
  if (!reason.empty()) text += ": " + std::string(reason);
  line(state_colour(state), "* ", text);
}

namespace {

// "2026-11-29T09:12:04.220Z info  started" shows as "09:12:04.220 info  started": the day is
// the run's.
std::string_view journal_time(std::string_view text, std::string_view& rest) {
  constexpr std::size_t kStamp = 24;  // 2026-11-29T09:12:04.220Z
  if (text.size() > kStamp && text[4] == '-' && text[10] == 'T' && text[kStamp - 1] == 'Z') {
    rest = text.substr(kStamp);
    return text.substr(11, kStamp - 12);
  }
  rest = text;
  return {};
}

}  // namespace

void Printer::journal(std::string_view id, std::string_view text) {
  std::string_view rest;
  const std::string_view time = journal_time(text, rest);
  line(kDim, "  | ", std::string(id) + " " + std::string(time) + std::string(rest));
}

void Printer::host_line(std::string_view text) {
  line(kDim, "  host: ", text);
}

void Printer::note(std::string_view text) {
  line(kDim, "", text);
}

void Printer::prompt() {
  if (color_) out_ << kBold;
  out_ << "run> ";
  if (color_) out_ << kReset;
  out_.flush();
}

void Printer::text(std::string_view text) {
  out_ << text;
  out_.flush();
}

}  // namespace escouade::harness
