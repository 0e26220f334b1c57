#pragma once

// A plugin's process tree: the process the host started (the leader, which leads its process
// group) and everything it started since. Found by parent pids, read from the system's process
// table (/proc on Linux); ended together without a fork escaping.
//
// Thread: any. Each call reads a fresh snapshot of the process table.

#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

namespace escouade::platform {

// The leader followed by all its living descendants (children of children...). Empty when the
// leader does not exist. A zombie leader is listed, but its descendants were re-parented when it
// died: see adopted_orphans_of.
std::vector<int> process_tree(int leader);

// The resident memory of the whole tree, in bytes.
std::uint64_t tree_resident_bytes(int leader);

// The resident memory of one process that no file backs (its heap, stacks, anonymous maps: its
// libraries' code left out), in bytes; 0 when it is gone. A sandbox helper is watched with it.
std::uint64_t private_resident_bytes(int pid);

// Ends the leader, its process group and every descendant, race-free against forks: stops them
// all (SIGSTOP), scans again until two scans in a row find nothing new and every one of them
// stopped, then kills them all (SIGKILL). `leader` must be a child that was not reaped yet (a
// zombie is fine), so that its pid and group are still its own. Never signals pid <= 1, this
// process or this process's group. Blocks for a few scans of the process table, and up to 2 s more
// while a process cannot stop (uninterruptible sleep) and no other makes progress: not for the
// event loop's thread.
void kill_tree(int leader);
// kill_tree of several leaders in one freeze: the cost of one, whatever their number.
void kill_trees(const std::vector<int>& leaders);

// Sends `sig` to process group `pgid` (a polite SIGTERM before kill_tree). False when it was
// refused: pgid <= 1, this process's own group, or no such group.
bool kill_group(int pgid, int sig);

// After a plugin's leader died: the processes the subreaper host adopted from it. They are
// children of this process that are not in `known_children` (the leaders and anything else the
// host started itself) and whose environment has ESCOUADE_PLUGIN_ID=<plugin_id>, which every
// plugin process is given and its descendants inherit. kill_tree each; an orphan's own orphans
// come to the host in turn, so call again until it is empty.
// (macOS has no subreaper: orphans go to launchd, pid 1, and are looked for there, same user.)
std::vector<int> adopted_orphans_of(std::string_view plugin_id,
                                    const std::set<int>& known_children);

// Every living child of this (subreaper) process that is not one of `known_children`, whatever
// its environment, session or process group. A host starts nothing but its plugins' leaders,
// their programs and its watchdog (all known), and a living leader keeps its own tree (it is a
// subreaper itself), so such a child is the orphan of a plugin whose leader ended: end each.
// Empty when this process is not a subreaper (is_subreaper): orphans then go elsewhere, and a
// child the host did not start is the embedding app's own, which the host never touches. Linux;
// on macOS orphans go to launchd and only adopted_orphans_of finds them.
std::vector<int> adopted_orphans(const std::set<int>& known_children);

// Reaps the children of this (subreaper) process that have ended and are not in
// `known_children`: adopted orphans, mostly. A known child is never reaped, so its exit status is
// left for wait_exit or try_wait. Nothing when this process is not a subreaper: an unknown child
// is then the embedding app's, and so is its status. Returns the reaped pids.
std::vector<int> reap_adopted(const std::set<int>& known_children);

}  // namespace escouade::platform
