#include <catch2/catch.hpp>

#include "attn/status.hpp"

TEST_CASE("status - Ok is ok and carries no field", "[status]") {
  const attn::Status s = attn::Status::Ok();
  CHECK(s.ok());
  CHECK(s.field.empty());
}

TEST_CASE("status - errors keep their code and field and message", "[status]") {
  const attn::Status a = attn::Status::Invalid("heads", "heads must be at least 1");
  CHECK_FALSE(a.ok());
  CHECK(a.code == attn::StatusCode::kInvalidArgument);
  CHECK(a.field == "heads");
  CHECK(a.message.find("heads") != std::string::npos);
  const attn::Status b = attn::Status::Exhausted("memory", "too big");
  CHECK(b.code == attn::StatusCode::kResourceExhausted);
  CHECK(b.field == "memory");
}
