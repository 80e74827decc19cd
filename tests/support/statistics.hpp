// Statistics for the validation tests: block averages of correlated time series, and reading a
// number from a flat JSON section (the OpenMM reference files' *.dynamics.json).
#pragma once

#include <cmath>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/text_file.hpp"  // read_text

namespace mdsim_test {

// The number after "key": inside the JSON object "section" (flat objects only).
inline double json_number(const std::string& text, const std::string& section, const std::string& key) {
  const auto s = text.find("\"" + section + "\"");
  if (s == std::string::npos) throw std::runtime_error("no section \"" + section + "\"");
  const auto k = text.find("\"" + key + "\"", s);
  if (k == std::string::npos) throw std::runtime_error("no key \"" + key + "\" in \"" + section + "\"");
  return std::stod(text.substr(text.find(':', k) + 1));
}

struct LinearFit {
  double slope = 0, slope_error = 0;
};

// Least-squares slope of y(t) from block means (blocks long compared with the series' correlation
// time), with the standard error from the residuals of the block means.
inline LinearFit block_fit(const std::vector<double>& t, const std::vector<double>& y, int blocks) {
  const std::size_t per = t.size() / static_cast<std::size_t>(blocks);
  std::vector<double> bt, by;
  for (int b = 0; b < blocks; ++b) {
    double st = 0, sy = 0;
    for (std::size_t i = b * per; i < (b + 1) * per; ++i) {
      st += t[i];
      sy += y[i];
    }
    bt.push_back(st / per);
    by.push_back(sy / per);
  }
  const double n = blocks;
  double mt = 0, my = 0;
  for (int i = 0; i < blocks; ++i) {
    mt += bt[i] / n;
    my += by[i] / n;
  }
  double stt = 0, sty = 0;
  for (int i = 0; i < blocks; ++i) {
    stt += (bt[i] - mt) * (bt[i] - mt);
    sty += (bt[i] - mt) * (by[i] - my);
  }
  LinearFit f;
  f.slope = sty / stt;
  double rss = 0;
  for (int i = 0; i < blocks; ++i) {
    const double r = by[i] - (my + f.slope * (bt[i] - mt));
    rss += r * r;
  }
  f.slope_error = std::sqrt(rss / (n - 2) / stt);
  return f;
}

// Mean of a correlated series with its standard error from `blocks` block means, the standard
// deviation of the samples, and the statistical inefficiency g = N SE^2 / variance (how many
// samples make one independent one).
struct BlockMean {
  double mean = 0, standard_error = 0, std_dev = 0, inefficiency = 1;
};
inline BlockMean block_mean(const std::vector<double>& y, int blocks) {
  const std::size_t per = y.size() / static_cast<std::size_t>(blocks);
  const std::size_t used = per * static_cast<std::size_t>(blocks);
  BlockMean r;
  for (std::size_t i = 0; i < used; ++i) r.mean += y[i] / used;
  double var = 0;
  for (std::size_t i = 0; i < used; ++i) var += (y[i] - r.mean) * (y[i] - r.mean) / used;
  r.std_dev = std::sqrt(var);
  double block_var = 0;
  for (int b = 0; b < blocks; ++b) {
    double m = 0;
    for (std::size_t i = b * per; i < (b + 1) * per; ++i) m += y[i] / per;
    block_var += (m - r.mean) * (m - r.mean) / (blocks - 1);
  }
  r.standard_error = std::sqrt(block_var / blocks);
  r.inefficiency = var > 0 ? std::max(1.0, used * r.standard_error * r.standard_error / var) : 1.0;
  return r;
}

}  // namespace mdsim_test
