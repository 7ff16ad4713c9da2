#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <vector>

#include "attn/backward.hpp"
#include "attn/mask.hpp"
#include "attn/names.hpp"
#include "attn/variants.hpp"

namespace {

std::vector<std::string> list(const attn::NameList& l) {
  return std::vector<std::string>(l.names, l.names + l.size);
}

}  // namespace

// The lists as the JS API documents them (docs/js-api.md), written out here on purpose: the test
// fails when a table changes without the documentation.
TEST_CASE("names - every list, in enum order", "[names]") {
  using V = std::vector<std::string>;
  CHECK(list(attn::normalizer_names()) == V{"softmax", "softmax1", "sigmoid", "relu", "linear"});
  CHECK(list(attn::position_names()) == V{"none", "rope", "alibi"});
  CHECK(list(attn::mask_mode_names()) == V{"before", "after"});
  CHECK(list(attn::precision_names()) == V{"float32", "float64", "float16"});
  CHECK(list(attn::mask_fill_names()) == V{"neg_inf", "finite", "zero"});
  CHECK(list(attn::kernel_names()) == V{"naive", "tiled"});
  CHECK(attn::normalizer_names()[static_cast<int>(attn::Normalizer::kSigmoid)] ==
        std::string("sigmoid"));
  CHECK(attn::kernel_names()[static_cast<int>(attn::Kernel::kTiled)] == std::string("tiled"));
  std::vector<std::string> options;
  for (std::size_t i = 0; i < attn::kNameListCount; ++i) {
    options.push_back(attn::all_name_lists()[i]->option);
  }
  CHECK(options == V{"normalizer", "position", "maskMode", "precision", "maskFill", "kernel"});
}

TEST_CASE("names - parse and print round-trip every enum value", "[names]") {
  for (int i = 0; i < 5; ++i) {
    attn::Normalizer n = attn::Normalizer::kSoftmax;
    REQUIRE(attn::parse_normalizer(attn::normalizer_name(static_cast<attn::Normalizer>(i)), &n));
    CHECK(static_cast<int>(n) == i);
  }
  for (int i = 0; i < 3; ++i) {
    attn::Position p = attn::Position::kNone;
    REQUIRE(attn::parse_position(attn::position_name(static_cast<attn::Position>(i)), &p));
    CHECK(static_cast<int>(p) == i);
    attn::Precision q = attn::Precision::kFloat32;
    REQUIRE(attn::parse_precision(attn::precision_name(static_cast<attn::Precision>(i)), &q));
    CHECK(static_cast<int>(q) == i);
    // mask.cpp parses the fills itself: it must agree with the table.
    attn::MaskFill f = attn::MaskFill::kNegInf;
    REQUIRE(attn::parse_mask_fill(attn::mask_fill_names()[i], &f));
    CHECK(static_cast<int>(f) == i);
    CHECK(std::string(attn::mask_fill_name(f)) == attn::mask_fill_names()[i]);
  }
  for (int i = 0; i < 2; ++i) {
    attn::MaskMode m = attn::MaskMode::kBefore;
    REQUIRE(attn::parse_mask_mode(attn::mask_mode_name(static_cast<attn::MaskMode>(i)), &m));
    CHECK(static_cast<int>(m) == i);
    attn::Kernel k = attn::Kernel::kNaive;
    REQUIRE(attn::parse_name(attn::kernel_names(), attn::kernel_names()[i], &k));
    CHECK(static_cast<int>(k) == i);
  }
  attn::Normalizer n = attn::Normalizer::kRelu;
  for (const char* bad : {"Softmax", "", "softmax ", "softmax2"})
    CHECK_FALSE(attn::parse_normalizer(bad, &n));
  CHECK(attn::normalizer_names().find(nullptr) == -1);
  CHECK(n == attn::Normalizer::kRelu);  // untouched by a failed parse
}

TEST_CASE("names - enum_at takes whole in-range list positions only", "[names]") {
  attn::Position p = attn::Position::kNone;
  CHECK(attn::enum_at(attn::position_names(), 2, &p));
  CHECK(p == attn::Position::kAlibi);
  for (double bad : {-1.0, 3.0, 0.5, 1e300, std::numeric_limits<double>::quiet_NaN()}) {
    p = attn::Position::kRope;
    CHECK_FALSE(attn::enum_at(attn::position_names(), bad, &p));
    CHECK(p == attn::Position::kRope);
  }
}

// The error messages come from the table, word for word what the JS API has always said.
TEST_CASE("names - error messages are built from the table", "[names]") {
  CHECK(attn::normalizer_names().must_be() ==
        "normalizer must be 'softmax', 'softmax1', 'sigmoid', 'relu' or 'linear'");
  CHECK(attn::position_names().must_be() == "position must be 'none', 'rope' or 'alibi'");
  CHECK(attn::mask_mode_names().must_be() == "maskMode must be 'before' or 'after'");
  CHECK(attn::precision_names().must_be() == "precision must be 'float32', 'float64' or 'float16'");
  CHECK(attn::mask_fill_names().must_be() == "maskFill must be 'neg_inf', 'finite' or 'zero'");
  CHECK(attn::kernel_names().must_be("fast") == "kernel must be 'naive' or 'tiled' (got 'fast')");
  const char* one[] = {"only"};
  CHECK(attn::must_be_text("x", one, 1) == "x must be 'only'");
}
