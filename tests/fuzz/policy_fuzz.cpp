// libFuzzer target for the guards that read a plugin's words: the path verdict of files/read,
// the secret key verdict, and the masking of secrets. Each checks a property that must hold
// for every input, not just that nothing crashes.
//
// Input: the first byte picks the guard, the rest is its material.
//   0: a path for own_file_parts: what it accepts never leaves, hides or names the manifest
//   1: a key for secret_key_refusal against {"token", "account:*"}: granted only as declared
//   2: secrets and a text, split by 0xFF bytes (up to 3 secrets, then the text): after mask(),
//      no secret is left in the text
//   3: a URL for the egress verdict of a plugin granted slack.com: what it lets through is
//      slack.com or a subdomain on a label boundary, over https, never an IP address
//   4: 16 bytes of an IPv6 address: one that carries an IPv4 (mapped, compatible, NAT64, 6to4)
//      of this machine or of the local network is never public; a name read as an IPv4 reads
//      back the same
//   5: a byte of flags (root given, which root, write) then a path for FsRoots::judge: what it
//      lets through starts at a declared root, never writes a read root, and its relative part
//      holds no "..", "~", empty part, backslash or leading '/'; an absolute path lies under
//      the root it was given to
//   6: a command and its arguments split by 0xFF bytes, for Commands::refusal against "git
//      status --porcelain" and "git log *", then each word as an env name: what runs is one of
//      the entries word for word, and PATH, LD_* and ESCOUADE_* are never set

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "journal/masker.hpp"
#include "policy/commands.hpp"
#include "policy/egress.hpp"
#include "policy/fs_roots.hpp"
#include "policy/paths.hpp"
#include "policy/secret_keys.hpp"

namespace {

[[noreturn]] void broken() {
  std::abort();
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void check_path(std::string_view path) {
  auto parts = escouade::policy::own_file_parts(path);
  if (!parts) return;
  if (parts->empty()) broken();
  for (const auto& p : *parts) {
    if (p.empty() || p[0] == '.') broken();  // hidden, "..", "."
    if (p.find_first_of(std::string_view("/\\\0", 3)) != std::string::npos) broken();
  }
  if (parts->size() == 1 && lower((*parts)[0]) == "escouade-plugin.json") broken();
  if (!path.empty() && path[0] == '/') broken();
}

void check_key(std::string_view key) {
  static const std::vector<std::string> granted = {"token", "account:*"};
  const bool ok = !escouade::policy::secret_key_refusal(granted, key);
  const bool expected = key == "token" || (key.size() > 8 && key.substr(0, 8) == "account:");
  if (ok != expected) broken();
}

void check_mask(std::string_view material) {
  std::vector<std::string> secrets;
  std::size_t at = 0;
  while (secrets.size() < 3) {
    const std::size_t cut = material.find('\xff', at);
    if (cut == std::string_view::npos) break;
    secrets.emplace_back(material.substr(at, cut - at));
    at = cut + 1;
  }
  std::string text(material.substr(at));
  escouade::Masker masker;
  for (const auto& s : secrets)
    masker.add(s);
  masker.mask(text);
  for (const auto& s : secrets) {
    // A secret made of the mask's own bytes may be written anew by the mask itself.
    if (s.empty() || s.find_first_of("\xe2\x80\xa2") != std::string::npos) continue;
    if (text.find(s) != std::string::npos) broken();
  }
}

void check_url(std::string_view url) {
  escouade::policy::EgressGrant grant;
  grant.plugin_id = "dev.fuzz";
  grant.hosts = {"slack.com"};
  auto t = escouade::policy::judge_url(grant, url, escouade::policy::UrlUse::fetch);
  if (!t) return;
  if (t->literal || !t->tls) broken();
  if (t->reach != escouade::policy::EgressTarget::Reach::public_only) broken();
  const std::string& h = t->host;
  if (h != "slack.com" && !(h.size() > 10 && h.ends_with(".slack.com"))) broken();
  // Whatever it resolves to, the machine's own addresses stay refused.
  if (!escouade::policy::judge_address(*t, boost::asio::ip::make_address("127.0.0.1"))) broken();
}

void check_address(std::string_view bytes) {
  if (bytes.size() < 16) return;
  boost::asio::ip::address_v6::bytes_type b;
  for (std::size_t i = 0; i < 16; ++i)
    b[i] = static_cast<unsigned char>(bytes[i]);
  const boost::asio::ip::address_v6 a(b);
  const auto carried = [&](std::size_t at) {
    return boost::asio::ip::address_v4((std::uint32_t(b[at]) << 24) |
                                       (std::uint32_t(b[at + 1]) << 16) |
                                       (std::uint32_t(b[at + 2]) << 8) | std::uint32_t(b[at + 3]));
  };
  const bool zero10 = std::all_of(b.begin(), b.begin() + 10, [](auto x) { return x == 0; });
  std::optional<boost::asio::ip::address_v4> v4;
  if (zero10 && ((b[10] == 0xff && b[11] == 0xff) || (b[10] == 0 && b[11] == 0))) v4 = carried(12);
  if (b[0] == 0x20 && b[1] == 0x02) v4 = carried(2);
  if (v4 && escouade::policy::local_kind(*v4) && !escouade::policy::local_kind(a)) broken();
  // A name ending in a number: the address it reads as reads back as itself.
  const std::string name(bytes.substr(16));
  auto read = escouade::policy::ipv4_of_name(name);
  if (read && *read) {
    auto again = escouade::policy::ipv4_of_name((*read)->to_string());
    if (!again || !*again || **again != **read) broken();
  }
}

void check_fs_path(std::string_view material) {
  using escouade::manifest::FileAccess;
  using escouade::manifest::FsRoot;
  if (material.empty()) return;
  const auto flags = static_cast<unsigned char>(material[0]);
  static const escouade::policy::FsRoots roots({{FsRoot::agent, FileAccess::read},
                                                {FsRoot::agent_repo, FileAccess::write},
                                                {FsRoot::temp, FileAccess::write}});
  static const escouade::policy::Agent agent{
      "a1", "p1", "/w/wt/a1", "/w/wt/a1/repo", "/w/home/a1", {"PATH=/usr/bin"}};
  const FsRoot kRoots[] = {FsRoot::plugin, FsRoot::agent, FsRoot::agent_repo, FsRoot::agent_home,
                           FsRoot::temp};
  escouade::policy::FsRequest request;
  request.agent = "a1";
  if (flags & 1) request.root = kRoots[(flags >> 1) % 5];
  request.write = (flags & 0x10) != 0;
  request.path = std::string(material.substr(1));
  auto t = roots.judge(request, &agent, escouade::policy::ProjectFence{false, true},
                       {"/w/plugin", "/w/temp"});
  if (!t) return;
  if (t->roots.empty() || t->roots[0].root != t->root) broken();
  if (t->root == FsRoot::plugin || t->root == FsRoot::agent_home) broken();  // not declared
  if (request.write && (t->root == FsRoot::agent || !t->roots[0].writable)) broken();
  const std::string& rel = t->relative;
  if (!rel.empty() && (rel.front() == '/' || rel.back() == '/')) broken();
  if (rel.find("//") != std::string::npos || rel.find('\\') != std::string::npos) broken();
  std::size_t at = 0;
  while (at <= rel.size() && !rel.empty()) {
    const std::size_t end = std::min(rel.find('/', at), rel.size());
    const std::string_view part = std::string_view(rel).substr(at, end - at);
    if (part == ".." || part == "." || part == "~" || part.empty()) broken();
    at = end + 1;
  }
  if (!request.root) {
    // An absolute path lies under the folder of the root it was given to, its "." and empty
    // parts dropped, and `relative` is the rest of it.
    std::string path;
    std::size_t from = 0;
    while (from < request.path.size()) {
      const std::size_t end = std::min(request.path.find('/', from), request.path.size());
      const std::string_view part = std::string_view(request.path).substr(from, end - from);
      if (!part.empty() && part != ".") path += "/" + std::string(part);
      from = end + 1;
    }
    const std::string folder = t->roots[0].folder.string();
    if (path != folder + (rel.empty() ? "" : "/" + rel)) broken();
  }
}

void check_command(std::string_view material) {
  std::vector<std::string> words;
  std::size_t at = 0;
  for (;;) {
    const std::size_t cut = material.find('\xff', at);
    words.emplace_back(material.substr(at, cut == std::string_view::npos ? cut : cut - at));
    if (cut == std::string_view::npos) break;
    at = cut + 1;
  }
  static const escouade::policy::Commands commands(
      {{"git status --porcelain", {"git", "status", "--porcelain"}, false},
       {"git log *", {"git", "log"}, true}});
  const std::vector<std::string> args(words.begin() + 1, words.end());
  if (!commands.refusal(words[0], args)) {
    const bool status = args == std::vector<std::string>{"status", "--porcelain"};
    const bool log = !args.empty() && args[0] == "log";
    if (words[0] != "git" || !(status || log)) broken();
    if (escouade::policy::program_name_refusal(words[0])) broken();
  }
  for (const auto& name : words) {
    if (escouade::policy::env_entry_form_problem(name, "x") || escouade::policy::env_refusal(name))
      continue;
    const std::string up = [&] {
      std::string u(name);
      for (auto& c : u)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return u;
    }();
    if (up == "PATH" || up.starts_with("LD_") || up.starts_with("DYLD_") ||
        up.starts_with("ESCOUADE_") || up == "NODE_OPTIONS" || up.starts_with("GIT_CONFIG"))
      broken();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 7) {
    case 0:
      check_path(rest);
      break;
    case 1:
      check_key(rest);
      break;
    case 2:
      check_mask(rest);
      break;
    case 3:
      check_url(rest);
      break;
    case 4:
      check_address(rest);
      break;
    case 5:
      check_fs_path(rest);
      break;
    default:
      check_command(rest);
      break;
  }
  return 0;
}
