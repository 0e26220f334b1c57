#pragma once

// The world as the network tests see it, on this machine alone (DESIGN.md, "Testing"): a private
// network namespace that the test binary makes for itself (user, network and mount namespaces,
// as `unshare -rnm` makes them), `lo` up with the lab's addresses on it, and /etc/hosts replaced
// by a bind mount that names the lab's servers. Documentation ranges stand for the public
// Internet; 127.0.0.0/8 and the private ranges for what a plugin must never reach. Nothing
// leaves the machine: the namespace has no other interface.

#include <string>
#include <vector>

namespace escouade::test {

// The lab's names and addresses. A name declared by the test plugins that resolves where it
// must not is as much a part of it as the good servers.
struct LabHost {
  const char* name;
  const char* address;
};
inline constexpr LabHost kLabHosts[] = {
    {"chat.example.com", "203.0.113.10"},        // a public service (TLS server on 443)
    {"api.chat.example.com", "203.0.113.10"},    // one of its subdomains
    {"slack.com", "203.0.113.30"},               // the example plugin's (a Slack of the tests')
    {"files.example.com", "198.51.100.7"},       // a second public one (nothing listens)
    {"other.example.org", "203.0.113.20"},       // public, and declared by no plugin
    {"v6.example.com", "2001:db8::10"},          // public over IPv6
    {"sneaky.example.com", "127.0.0.1"},         // declared, but this machine
    {"intranet.example.com", "10.1.2.3"},        // declared, but the local network
    {"mapped.example.com", "::ffff:127.0.0.1"},  // an IPv6 form carrying loopback
    {"mixed.example.com", "203.0.113.10"},       // a public address and...
    {"mixed.example.com", "127.0.0.1"},          // ...one of this machine
    {"git.example.internal", "10.20.30.40"},     // a user's own server ({account})
    {"proxy.lab", "10.9.9.9"},                   // the test proxy
};
// The addresses put on lo (127.0.0.1 and ::1 are there already).
inline constexpr const char* kLabAddresses[] = {
    "203.0.113.10/32", "203.0.113.20/32", "203.0.113.30/32", "198.51.100.7/32",
    "10.1.2.3/32",     "10.20.30.40/32",  "10.9.9.9/32",     "2001:db8::10/128",
};

// Enters the lab: call first thing in main, while the process has one thread. Empty on
// success, else why it could not (the kernel refuses unprivileged user namespaces, `ip` is
// missing...).
std::string enter_net_lab();

}  // namespace escouade::test
