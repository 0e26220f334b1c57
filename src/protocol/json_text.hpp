#pragma once

// JSON text taken as it is: checked without being built into values, and the members of an
// object found in it. What escouade-host forwards between the app and a plugin (a host/call's
// payload, the plugin's result) goes through these instead of a DOM: parsing it into values and
// writing them out again cost more than the rest of the call (docs/PERFORMANCE.md).

#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace escouade::proto {

// Whether `text` is one JSON value, with nothing but whitespace around it, that the Decoder
// (decode.hpp) would take: nested at most `max_depth` deep, its strings valid UTF-8, each of its
// numbers finite. Boost.JSON's own parser checks it, building nothing. It is stricter in one
// case: a number too large for a double that a later member of the same name hides from the
// Decoder's values ({"a":1e400,"a":0}) is refused here. It is the reference the one-pass
// checked_object_members is held to (its tests, fuzz_codec).
bool is_json_text(std::string_view text, std::size_t max_depth);

// One member of an object, as written: `key` between its quotes, escapes left as they are (so
// "a\u0062" is not "ab"), and `value`, the text of its value without the whitespace around it.
struct MemberText {
  std::string_view key;
  std::string_view value;
};

// The members of the object `text`, in their order, written into `out`: how many there are, or
// nullopt when `text` is not an object with at most out.size() members. Meant for text already
// checked (a part of a line checked_object_members took, as a decision's result); on any other it
// never reads outside `text` and may return nullopt or spans that mean nothing, so the text is to
// be checked before what it says is trusted.
std::optional<std::size_t> object_members(std::string_view text, std::span<MemberText> out);

// is_json_text and object_members in one pass: the members of `text` when it is one JSON object
// the Decoder would take (is_json_text's rules, checked here byte by byte instead of by
// Boost.JSON's parser), nullopt otherwise. Also nullopt for the rare object it does not vouch
// for although the Decoder may take it: one holding a number of more than 300 digits, or whose
// exponent and digits put it past 1e300 (Boost.JSON reads some such numbers as infinity); such
// text goes the Decoder's way, which decides. json_text_check_test and fuzz_codec hold it to
// is_json_text: it never takes what that refuses.
std::optional<std::size_t> checked_object_members(std::string_view text, std::size_t max_depth,
                                                  std::span<MemberText> out);
// The same, and in the same pass the members of the object that is the value of the member
// `key` (its first such value), into `inner`: `inner` nullopt when no member `key` holds an
// object; nullopt as a whole when either object has more members than its span holds.
struct NestedMembers {
  std::size_t outer = 0;
  std::optional<std::size_t> inner;
};
std::optional<NestedMembers> checked_object_members(std::string_view text, std::size_t max_depth,
                                                    std::span<MemberText> out, std::string_view key,
                                                    std::span<MemberText> inner);

// Whether a key among `members` is written with an escape: "r\u0065sult" is "result" to the
// decoder, so such an object's members are not to be compared with names as written.
bool has_escaped_key(std::span<const MemberText> members);

// The value of the member `key` (as written) in `members`; nullopt when there is none, or more
// than one (a key given twice is left to the Decoder, which builds the values).
std::optional<std::string_view> member(std::span<const MemberText> members, std::string_view key);

// The values of `text`, one JSON value is_json_text accepted, built in `storage` (an arena on
// the caller's stack, for a short text); the parser's own work room is on this call's stack
// too, so a short text costs no heap allocation at all. Null if the text does not parse after
// all (it cannot, once checked).
boost::json::value parse_checked(std::string_view text, boost::json::storage_ptr storage);

// Whether `value` is a JSON integer written without fraction nor exponent that fits in int64:
// its value, else nullopt.
std::optional<std::int64_t> integer_text(std::string_view value);

}  // namespace escouade::proto
