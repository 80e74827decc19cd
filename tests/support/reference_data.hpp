// Reading the reference files (OpenMM's results in tests/data and tests/data/shared/reference): a small JSON
// reader, a box from JSON, an HDF5 N x 3 dataset reader, and comparison helpers.
#pragma once

#include <hdf5.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "physics/pbc.hpp"
#include "physics/vec3.hpp"

namespace mdsim_test {

// ---- JSON (objects, arrays, numbers, strings, true/false/null; enough for the reference files) ----
struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool boolean = false;
  double number = 0.0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  const Json& operator[](const std::string& key) const {
    auto it = object.find(key);
    if (kind != Object || it == object.end()) throw std::runtime_error("json: no key '" + key + "'");
    return it->second;
  }
  const Json& operator[](size_t i) const {
    if (kind != Array || i >= array.size()) throw std::runtime_error("json: index out of range");
    return array[i];
  }
  bool has(const std::string& key) const { return kind == Object && object.count(key) > 0; }
  bool is_null() const { return kind == Null; }
  double num() const {
    if (kind != Number) throw std::runtime_error("json: not a number");
    return number;
  }
  size_t size() const { return kind == Array ? array.size() : object.size(); }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& text) : s_(text) {}
  Json parse() {
    Json v = value();
    skip();
    if (pos_ != s_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("json: " + what + " at offset " + std::to_string(pos_));
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool literal(const char* word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) == 0) {
      pos_ += w.size();
      return true;
    }
    return false;
  }
  Json value() {
    skip();
    if (pos_ >= s_.size()) fail("unexpected end");
    Json v;
    const char c = s_[pos_];
    if (c == '{') {
      v.kind = Json::Object;
      ++pos_;
      skip();
      if (s_[pos_] == '}') {
        ++pos_;
        return v;
      }
      for (;;) {
        skip();
        std::string key = str();
        skip();
        if (s_[pos_++] != ':') fail("expected ':'");
        v.object[key] = value();
        skip();
        if (s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (s_[pos_] == '}') {
          ++pos_;
          return v;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.kind = Json::Array;
      ++pos_;
      skip();
      if (s_[pos_] == ']') {
        ++pos_;
        return v;
      }
      for (;;) {
        v.array.push_back(value());
        skip();
        if (s_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (s_[pos_] == ']') {
          ++pos_;
          return v;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.kind = Json::String;
      v.string = str();
      return v;
    }
    if (literal("true")) {
      v.kind = Json::Bool;
      v.boolean = true;
      return v;
    }
    if (literal("false")) {
      v.kind = Json::Bool;
      return v;
    }
    if (literal("null")) return v;
    if (literal("NaN")) {
      v.kind = Json::Number;
      v.number = std::nan("");
      return v;
    }
    char* end = nullptr;
    v.number = std::strtod(s_.c_str() + pos_, &end);
    if (end == s_.c_str() + pos_) fail("bad value");
    v.kind = Json::Number;
    pos_ = static_cast<size_t>(end - s_.c_str());
    return v;
  }
  std::string str() {
    if (s_[pos_] != '"') fail("expected string");
    ++pos_;
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\') {
        ++pos_;
        const char e = s_[pos_];
        out += (e == 'n') ? '\n' : (e == 't') ? '\t' : e;  // \uXXXX is not needed here
        ++pos_;
      } else {
        out += s_[pos_++];
      }
    }
    ++pos_;
    return out;
  }
  const std::string& s_;
  size_t pos_ = 0;
};

inline Json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  return JsonParser(text).parse();
}

inline std::vector<mdsim::Vec3d> json_vec3_list(const Json& j) {
  std::vector<mdsim::Vec3d> out;
  for (const Json& row : j.array) out.emplace_back(row[0].num(), row[1].num(), row[2].num());
  return out;
}

// A box from its three vectors as rows [[ax, ay, az], [bx, by, bz], [cx, cy, cz]].
inline mdsim::Boxd box_from(const Json& b) {
  mdsim::Boxd box;
  box.a = mdsim::Vec3d(b[0][0].num(), b[0][1].num(), b[0][2].num());
  box.b = mdsim::Vec3d(b[1][0].num(), b[1][1].num(), b[1][2].num());
  box.c = mdsim::Vec3d(b[2][0].num(), b[2][1].num(), b[2][2].num());
  return box;
}

// ---- HDF5: a float64 N x 3 dataset ----
inline std::vector<mdsim::Vec3d> read_h5_vec3(const std::string& file, const std::string& dataset) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) throw std::runtime_error("cannot open " + file);
  const hid_t d = H5Dopen2(f, dataset.c_str(), H5P_DEFAULT);
  if (d < 0) {
    H5Fclose(f);
    throw std::runtime_error("no dataset " + dataset + " in " + file);
  }
  const hid_t space = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(space, dims, nullptr);
  std::vector<double> flat(static_cast<size_t>(dims[0] * dims[1]));
  H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, flat.data());
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(f);
  if (dims[1] != 3) throw std::runtime_error(dataset + " is not N x 3");
  std::vector<mdsim::Vec3d> out(static_cast<size_t>(dims[0]));
  for (size_t i = 0; i < out.size(); ++i) out[i] = mdsim::Vec3d(flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]);
  return out;
}

// ---- comparisons ----
// sqrt(sum |a_i - b_i|^2 / sum |b_i|^2)
inline double relative_rms_difference(const std::vector<mdsim::Vec3d>& a, const std::vector<mdsim::Vec3d>& b) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    num += mdsim::norm2(a[i] - b[i]);
    den += mdsim::norm2(b[i]);
  }
  return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

inline double max_abs_difference(const std::vector<mdsim::Vec3d>& a, const std::vector<mdsim::Vec3d>& b) {
  double m = 0.0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, mdsim::norm(a[i] - b[i]));
  return m;
}

inline double relative_difference(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); }

}  // namespace mdsim_test
