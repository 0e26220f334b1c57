// The project's schema must say exactly what the spec's says: same methods, directions,
// delays, errors, definitions, types, enums and required lists, in the same order. Only the
// descriptions (and the title) are the project's own words.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace json = boost::json;

json::value load(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

// Removes every "description" member, and the root's "title"; counts what it removed.
void strip_descriptions(json::value& v, int& removed) {
  if (auto* o = v.if_object()) {
    if (o->erase("description")) ++removed;
    for (auto& m : *o)
      strip_descriptions(m.value(), removed);
  } else if (auto* a = v.if_array()) {
    for (auto& x : *a)
      strip_descriptions(x, removed);
  }
}

// Lists every description with its JSON path.
void descriptions(const json::value& v, const std::string& path,
                  std::vector<std::pair<std::string, std::string>>& out) {
  if (const auto* o = v.if_object()) {
    for (const auto& m : *o) {
      const std::string sub = path + "/" + std::string(m.key());
      if (m.key() == "description" && m.value().is_string()) {
        out.emplace_back(sub, std::string(m.value().get_string()));
      } else {
        descriptions(m.value(), sub, out);
      }
    }
  } else if (const auto* a = v.if_array()) {
    for (std::size_t i = 0; i < a->size(); ++i) {
      descriptions((*a)[i], path + "/" + std::to_string(i), out);
    }
  }
}

const std::filesystem::path kSpec =
    std::filesystem::path(ESCOUADE_SPEC_DIR) / "plugin-protocol-1.json";

TEST(SchemaStructure, EqualsTheSpecIgnoringDescriptions) {
  if (!std::filesystem::exists(kSpec)) {
    GTEST_SKIP() << "skipped: the spec is not beside this checkout (" << kSpec.string()
                 << " does not exist), so there is nothing to compare the schema with";
  }
  json::value ours = load(ESCOUADE_PROTOCOL_SCHEMA);
  json::value spec = load(kSpec);
  int ours_removed = 0;
  int spec_removed = 0;
  ours.as_object().erase("title");
  spec.as_object().erase("title");
  strip_descriptions(ours, ours_removed);
  strip_descriptions(spec, spec_removed);
  EXPECT_EQ(ours_removed, spec_removed) << "every description is kept, none added";
  // Serialized: Boost.JSON keeps members in their order, so this also compares the order.
  EXPECT_EQ(json::serialize(ours), json::serialize(spec));
  EXPECT_EQ(ours, spec);
}

TEST(SchemaStructure, DescriptionsAreOurOwnWords) {
  if (!std::filesystem::exists(kSpec)) {
    GTEST_SKIP() << "skipped: the spec is not beside this checkout (" << kSpec.string() << ")";
  }
  std::vector<std::pair<std::string, std::string>> ours, spec;
  descriptions(load(ESCOUADE_PROTOCOL_SCHEMA), "", ours);
  descriptions(load(kSpec), "", spec);
  ASSERT_EQ(ours.size(), spec.size());
  for (std::size_t i = 0; i < ours.size(); ++i) {
    EXPECT_EQ(ours[i].first, spec[i].first);
    EXPECT_NE(ours[i].second, spec[i].second) << ours[i].first << " is copied from the spec";
  }
}

TEST(SchemaStructure, ComparisonSeesAStructuralChange) {
  // The comparison above must be able to fail: one changed delay is a difference.
  json::value ours = load(ESCOUADE_PROTOCOL_SCHEMA);
  json::value changed = ours;
  changed.at("x-methods").at("permissions/decide").as_object()["timeoutMs"] = 501;
  int n = 0;
  strip_descriptions(ours, n);
  strip_descriptions(changed, n);
  EXPECT_NE(json::serialize(ours), json::serialize(changed));
}

}  // namespace
