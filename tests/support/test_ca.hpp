#pragma once

// A certificate authority made for one test run, and the server certificates it signs (P-256
// keys, SHA-256 signatures, valid from an hour ago for a day): what the TLS servers of the tests
// present, and what the host is told to trust by --ca-file. Nothing is kept on disk but what a
// test writes itself.

#include <memory>
#include <string>
#include <vector>

namespace escouade::test {

struct TestCertificate {
  std::string cert_pem;
  std::string key_pem;
};

class TestCa {
 public:
  explicit TestCa(std::string name = "Escouade Test CA");
  ~TestCa();
  TestCa(const TestCa&) = delete;
  TestCa& operator=(const TestCa&) = delete;

  // The CA's certificate, as a --ca-file holds it.
  const std::string& pem() const { return pem_; }
  // A server certificate for `names`: each a DNS name, or an IP address written as one.
  TestCertificate issue(const std::vector<std::string>& names) const;

 private:
  struct Keys;
  std::unique_ptr<Keys> keys_;
  std::string pem_;
};

}  // namespace escouade::test
