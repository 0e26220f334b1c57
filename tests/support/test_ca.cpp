#include "support/test_ca.hpp"

#include <arpa/inet.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <stdexcept>

namespace escouade::test {

namespace {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test CA: ") + what);
}

Key new_key() {
  Key k(EVP_EC_gen("P-256"));
  check(k != nullptr, "EC key");
  return k;
}

std::string pem_of(X509* c) {
  BIO* b = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(b, c);
  char* data = nullptr;
  const long n = BIO_get_mem_data(b, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(b);
  return out;
}

std::string pem_of(EVP_PKEY* k) {
  BIO* b = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(b, k, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(b, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(b);
  return out;
}

void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  check(ext != nullptr, "extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

Cert new_cert(EVP_PKEY* key, const std::string& common_name, long serial) {
  Cert c(X509_new());
  X509_set_version(c.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(c.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(c.get()), 24 * 3600);
  X509_set_pubkey(c.get(), key);
  X509_NAME* name = X509_get_subject_name(c.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  return c;
}

bool is_ip(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

}  // namespace

struct TestCa::Keys {
  Key key;
  Cert cert;
};

TestCa::TestCa(std::string name) : keys_(std::make_unique<Keys>()) {
  keys_->key = new_key();
  keys_->cert = new_cert(keys_->key.get(), name, 1);
  X509_set_issuer_name(keys_->cert.get(), X509_get_subject_name(keys_->cert.get()));
  add_extension(keys_->cert.get(), keys_->cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_extension(keys_->cert.get(), keys_->cert.get(), NID_key_usage,
                "critical,keyCertSign,cRLSign");
  add_extension(keys_->cert.get(), keys_->cert.get(), NID_subject_key_identifier, "hash");
  check(X509_sign(keys_->cert.get(), keys_->key.get(), EVP_sha256()) > 0, "CA signature");
  pem_ = pem_of(keys_->cert.get());
}

TestCa::~TestCa() = default;

TestCertificate TestCa::issue(const std::vector<std::string>& names) const {
  static long serial = 100;
  Key key = new_key();
  Cert cert = new_cert(key.get(), names.empty() ? "server" : names.front(), ++serial);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(keys_->cert.get()));
  std::string san;
  for (const auto& n : names)
    san += (san.empty() ? "" : ",") + std::string(is_ip(n) ? "IP:" : "DNS:") + n;
  add_extension(cert.get(), keys_->cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert.get(), keys_->cert.get(), NID_ext_key_usage, "serverAuth");
  add_extension(cert.get(), keys_->cert.get(), NID_authority_key_identifier, "keyid:always");
  if (!san.empty()) add_extension(cert.get(), keys_->cert.get(), NID_subject_alt_name, san);
  check(X509_sign(cert.get(), keys_->key.get(), EVP_sha256()) > 0, "server signature");
  return TestCertificate{pem_of(cert.get()), pem_of(key.get())};
}

}  // namespace escouade::test
