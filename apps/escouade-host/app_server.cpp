#include "app_server.hpp"

#include <boost/asio/write.hpp>
#include <boost/json/value_from.hpp>
#include <iostream>

#include "protocol/gen/errors.hpp"

namespace escouade::app {

namespace asio = boost::asio;
namespace json = boost::json;

namespace {

constexpr int kInvalidParams = static_cast<int>(proto::ErrorCode::invalid_params);

// Reads a member of the params: what a handler of the app's methods needs, with an error that
// names the field.
const json::value* member(const json::value* params, std::string_view name) {
  if (!params || !params->is_object()) return nullptr;
  return params->as_object().if_contains(name);
}

std::optional<std::string> string_member(const json::value* params, std::string_view name) {
  const json::value* v = member(params, name);
  if (!v || !v->is_string()) return std::nullopt;
  return std::string(v->get_string());
}

void missing(rpc::Reply& reply, std::string_view field, std::string_view what) {
  reply.error(kInvalidParams, "params." + std::string(field) + ": " + std::string(what));
}

json::value status_json(const supervisor::Status& s) {
  json::object o;
  o["id"] = s.id;
  o["state"] = supervisor::to_string(s.state);
  o["pid"] = s.pid ? json::value(*s.pid) : json::value(nullptr);
  o["crashes"] = s.crashes;
  o["reason"] = s.reason.empty() ? json::value(nullptr) : json::value(s.reason);
  return o;
}

void answer(rpc::Reply& reply, const Result<void>& r) {
  if (r) {
    reply.result(nullptr);
  } else {
    reply.error(r.error().code, r.error().message);
  }
}

}  // namespace

AppServer::AppServer(asio::io_context& io, int in_fd, int out_fd, std::function<void()> stopped)
    : in_(io, in_fd),
      out_(io, out_fd),
      stopped_(std::move(stopped)),
      session_(
          io.get_executor(), [this](std::string line) { write(std::move(line)); },
          [](std::string_view sentence) {
            std::cerr << "escouade-host: the app " << sentence << "\n";
          }) {}

void AppServer::bind(host::Host& host) {
  host_ = &host;
  session_.handle("host/load", [this](const json::value* p, rpc::Reply reply) {
    auto folder = string_member(p, "folder");
    if (!folder) return missing(reply, "folder", "required, the plugin's folder");
    auto loaded = host_->load(*folder);
    if (!loaded) return reply.error(loaded.error().code, loaded.error().message);
    json::object o;
    o["id"] = loaded->id;
    o["version"] = loaded->version;
    o["run"] = loaded->run ? json::value(*loaded->run) : json::value(nullptr);
    json::array activation;
    for (const auto& a : loaded->activation)
      activation.emplace_back(a);
    o["activation"] = std::move(activation);
    reply.result(std::move(o));
  });

  session_.handle("host/enable", [this](const json::value* p, rpc::Reply reply) {
    auto id = string_member(p, "id");
    if (!id) return missing(reply, "id", "required, a plugin's id");
    const json::value* pr = member(p, "project");
    if (!pr || !pr->is_object()) return missing(reply, "project", "required, {id, name, private}");
    host::Project project;
    auto pid = string_member(pr, "id");
    auto name = string_member(pr, "name");
    const json::value* priv = member(pr, "private");
    if (!pid) return missing(reply, "project.id", "required, a string");
    if (!name) return missing(reply, "project.name", "required, a string");
    if (!priv || !priv->is_bool()) return missing(reply, "project.private", "required, a boolean");
    project.id = *pid;
    project.name = *name;
    project.is_private = priv->get_bool();
    if (auto folder = string_member(pr, "folder")) project.folder = *folder;
    answer(reply, host_->enable(*id, project));
  });

  session_.handle("host/disable", [this](const json::value* p, rpc::Reply reply) {
    auto id = string_member(p, "id");
    if (!id) return missing(reply, "id", "required, a plugin's id");
    const json::value* pr = member(p, "project");
    std::optional<std::string> pid;
    if (pr && pr->is_string()) pid = std::string(pr->get_string());
    if (pr && pr->is_object()) pid = string_member(pr, "id");
    if (!pid) return missing(reply, "project", "required, a project or its id");
    answer(reply, host_->disable(*id, *pid));
  });

  session_.handle("host/publish", [this](const json::value* p, rpc::Reply reply) {
    const json::value* fact = member(p, "fact");
    if (!fact) return missing(reply, "fact", "required, the fact to publish");
    auto delivered = host_->publish(*fact);
    if (!delivered)
      return reply.error(delivered.error().code, "params." + delivered.error().message);
    json::array ids;
    for (const auto& id : *delivered)
      ids.emplace_back(id);
    reply.result(json::object{{"delivered", std::move(ids)}});
  });

  session_.handle("host/call", [this](const json::value* p, rpc::Reply reply) {
    auto id = string_member(p, "id");
    if (!id) return missing(reply, "id", "required, a plugin's id");
    auto method = string_member(p, "method");
    if (!method) return missing(reply, "method", "required, the method to call");
    std::optional<json::value> params;
    if (const json::value* cp = member(p, "params"); cp && !cp->is_null()) params = *cp;
    std::optional<std::chrono::milliseconds> timeout;
    if (const json::value* t = member(p, "timeoutMs")) {
      if (!t->is_int64() || t->get_int64() <= 0) {
        return missing(reply, "timeoutMs", "a positive integer of milliseconds");
      }
      timeout = std::chrono::milliseconds(t->get_int64());
    }
    auto shared = std::make_shared<rpc::Reply>(std::move(reply));
    host_->call(*id, *method, std::move(params), timeout, [shared](Result<json::value> r) {
      if (r) {
        shared->result(std::move(*r));
      } else {
        shared->error(r.error().code, r.error().message);
      }
    });
  });

  session_.handle("host/decide", [this](const json::value* p, rpc::Reply reply) {
    if (!p) return missing(reply, "request", "required, with project: a permission request");
    auto shared = std::make_shared<rpc::Reply>(std::move(reply));
    host_->decide(*p, [shared](Result<host::Verdict> v) {
      if (v) {
        shared->result(host::to_json(*v));
      } else {
        shared->error(v.error().code, v.error().message);
      }
    });
  });

  session_.handle("host/secrets/set", [this](const json::value* p, rpc::Reply reply) {
    auto id = string_member(p, "id");
    if (!id) return missing(reply, "id", "required, a plugin's id");
    auto key = string_member(p, "key");
    if (!key) return missing(reply, "key", "required, a key of its permissions.secrets");
    auto value = string_member(p, "value");
    if (!value) return missing(reply, "value", "required, the secret, a string");
    auto shared = std::make_shared<rpc::Reply>(std::move(reply));
    host_->set_secret(*id, *key, std::move(*value),
                      [shared](Result<void> r) { answer(*shared, r); });
  });

  session_.handle("host/secrets/delete", [this](const json::value* p, rpc::Reply reply) {
    auto id = string_member(p, "id");
    if (!id) return missing(reply, "id", "required, a plugin's id");
    auto key = string_member(p, "key");
    if (!key) return missing(reply, "key", "required, a key of its permissions.secrets");
    auto shared = std::make_shared<rpc::Reply>(std::move(reply));
    host_->delete_secret(*id, *key, [shared](Result<void> r) { answer(*shared, r); });
  });

  session_.handle("host/settings/set", [this](const json::value* p, rpc::Reply reply) {
    auto id = string_member(p, "id");
    if (!id) return missing(reply, "id", "required, a plugin's id");
    const json::value* values = member(p, "values");
    if (!values || !values->is_object()) {
      return missing(reply, "values", "required, an object of setting name to value");
    }
    answer(reply, host_->set_settings(*id, values->get_object()));
  });

  session_.handle("host/restart", [this](const json::value* p, rpc::Reply reply) {
    auto id = string_member(p, "id");
    if (!id) return missing(reply, "id", "required, a plugin's id");
    answer(reply, host_->restart(*id));
  });

  session_.handle("host/status", [this](const json::value* p, rpc::Reply reply) {
    std::optional<std::string> id = string_member(p, "id");
    if (const json::value* v = member(p, "id"); v && !v->is_string() && !v->is_null()) {
      return missing(reply, "id", "a plugin's id, a string");
    }
    auto all = host_->status(id ? std::optional<std::string_view>(*id) : std::nullopt);
    if (!all) return reply.error(all.error().code, all.error().message);
    json::array out;
    for (const auto& s : *all)
      out.push_back(status_json(s));
    reply.result(std::move(out));
  });

  session_.handle("host/journal", [this](const json::value* p, rpc::Reply reply) {
    auto id = string_member(p, "id");
    if (!id) return missing(reply, "id", "required, a plugin's id");
    std::size_t lines = 500;
    if (const json::value* n = member(p, "lines")) {
      if (!n->is_int64() || n->get_int64() <= 0) {
        return missing(reply, "lines", "a positive integer");
      }
      lines = static_cast<std::size_t>(n->get_int64());
    }
    auto tail = host_->journal(*id, lines);
    if (!tail) return reply.error(tail.error().code, tail.error().message);
    json::array out;
    for (const auto& l : *tail)
      out.emplace_back(l);
    reply.result(json::object{{"lines", std::move(out)}});
  });

  session_.handle("host/shutdown", [this](const json::value*, rpc::Reply reply) {
    auto shared = std::make_shared<rpc::Reply>(std::move(reply));
    closing_ = true;
    host_->shutdown([this, shared] {
      shared->result(nullptr);
      close_host();
    });
  });
}

void AppServer::start() {
  read();
}

void AppServer::status_changed(const supervisor::Status& s) {
  json::value params = status_json(s);
  params.as_object().erase("pid");
  params.as_object().erase("crashes");
  session_.notify("host/statusChanged", std::move(params));
}

void AppServer::read() {
  in_.async_read_some(asio::buffer(buffer_), [this](boost::system::error_code ec, std::size_t n) {
    if (n > 0) {
      framer_.feed(
          std::string_view(buffer_.data(), n),
          [this](std::string_view line) { session_.feed_line(line); },
          [this](std::size_t limit) { session_.line_too_long(limit); });
    }
    if (!ec) {
      read();
      return;
    }
    if (ec == asio::error::operation_aborted) return;
    // The app closed our input: that is a shutdown.
    if (std::string rest = framer_.finish(); !rest.empty()) session_.feed_line(rest);
    if (closing_) return;
    closing_ = true;
    host_->shutdown([this] { close_host(); });
  });
}

void AppServer::close() {
  closing_ = true;
  boost::system::error_code ignored;
  in_.close(ignored);
  session_.close();
}

void AppServer::close_host() {
  boost::system::error_code ignored;
  in_.cancel(ignored);
  if (stopped_) {
    auto stopped = std::move(stopped_);
    stopped_ = nullptr;
    stopped();
  }
}

void AppServer::write(std::string line) {
  pending_.append(line);
  write_next();
}

void AppServer::when_drained(std::function<void()> done) {
  drained_ = std::move(done);
  write_next();
}

void AppServer::write_next() {
  if (!writing_ && pending_.empty() && drained_) {
    auto done = std::move(drained_);
    drained_ = nullptr;
    done();
    return;
  }
  if (writing_ || pending_.empty()) return;
  writing_ = true;
  in_flight_.clear();
  in_flight_.swap(pending_);
  asio::async_write(out_, asio::buffer(in_flight_),
                    [this](boost::system::error_code ec, std::size_t) {
                      writing_ = false;
                      if (ec) pending_.clear();  // the app is gone: nothing more goes out
                      write_next();
                    });
}

}  // namespace escouade::app
