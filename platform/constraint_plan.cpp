#include "platform/constraint_plan.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

#include "common/errors.hpp"

namespace mdsim {

namespace {

std::pair<int, int> ordered(int a, int b) { return a < b ? std::make_pair(a, b) : std::make_pair(b, a); }

int find_root(std::vector<int>& parent, int i) {
  while (parent[static_cast<std::size_t>(i)] != i) {
    parent[static_cast<std::size_t>(i)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(i)])];
    i = parent[static_cast<std::size_t>(i)];
  }
  return i;
}

}  // namespace

ConstraintPlan::ConstraintPlan(const System& system, const std::vector<double>& masses_amu) {
  const int n = system.num_particles();
  if (static_cast<int>(masses_amu.size()) != n)
    throw RuntimeError("constraints: " + std::to_string(masses_amu.size()) + " masses for " + std::to_string(n) +
                       " particles");
  inverse_mass_.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const double m = masses_amu[static_cast<std::size_t>(i)];
    inverse_mass_[static_cast<std::size_t>(i)] = m > 0.0 ? 1.0 / m : 0.0;
  }
  num_constraints_ = static_cast<int>(system.constraints.size());
  check_and_record(system);
  choose_settle_waters(system, masses_amu);
  invert_coupling(system);
}

// Every constraint refers to two distinct particles with mass, at a positive length.
void ConstraintPlan::check_and_record(const System& system) {
  const int n = system.num_particles();
  for (std::size_t c = 0; c < system.constraints.size(); ++c) {
    const auto& dc = system.constraints[c];
    if (dc.i < 0 || dc.i >= n || dc.j < 0 || dc.j >= n || dc.i == dc.j)
      throw RuntimeError("system: constraint " + std::to_string(c) + " refers to particles " + std::to_string(dc.i) +
                         " and " + std::to_string(dc.j) + ", but the system has " + std::to_string(n) + " particles");
    if (!(dc.distance_nm > 0.0))
      throw RuntimeError("system: constraint " + std::to_string(c) + " has non-positive length " +
                         std::to_string(dc.distance_nm) + " nm");
    if (inverse_mass_[static_cast<std::size_t>(dc.i)] == 0.0 || inverse_mass_[static_cast<std::size_t>(dc.j)] == 0.0)
      throw RuntimeError("system: constraint " + std::to_string(c) + " involves a particle with zero mass");
    all_pairs_.emplace_back(dc.i, dc.j);
    all_distances_.push_back(dc.distance_nm);
  }
}

// SETTLE for rigid waters whose three constraints are present, whose hydrogens have equal masses
// (the canonical triangle assumes it) and whose atoms take part in no other constraint.
void ConstraintPlan::choose_settle_waters(const System& system, const std::vector<double>& masses_amu) {
  const int n = system.num_particles();
  std::map<std::pair<int, int>, double> constraint_length;
  for (const auto& dc : system.constraints) constraint_length[ordered(dc.i, dc.j)] = dc.distance_nm;
  std::vector<int> constraint_count(static_cast<std::size_t>(n), 0);
  for (const auto& [a, b] : all_pairs_) {
    ++constraint_count[static_cast<std::size_t>(a)];
    ++constraint_count[static_cast<std::size_t>(b)];
  }
  std::map<std::pair<int, int>, char> settled_pair;
  for (const auto& w : system.rigid_waters) {
    const int atoms[3] = {w.oxygen, w.hydrogen1, w.hydrogen2};
    bool ok = true;
    for (int a : atoms) ok = ok && a >= 0 && a < n && constraint_count[static_cast<std::size_t>(a)] == 2;
    if (!ok) continue;
    const auto oh1 = constraint_length.find(ordered(w.oxygen, w.hydrogen1));
    const auto oh2 = constraint_length.find(ordered(w.oxygen, w.hydrogen2));
    const auto hh = constraint_length.find(ordered(w.hydrogen1, w.hydrogen2));
    if (oh1 == constraint_length.end() || oh2 == constraint_length.end() || hh == constraint_length.end()) continue;
    if (oh1->second != oh2->second) continue;
    if (masses_amu[static_cast<std::size_t>(w.hydrogen1)] != masses_amu[static_cast<std::size_t>(w.hydrogen2)]) continue;
    settle_.push_back({w.oxygen, w.hydrogen1, w.hydrogen2, oh1->second, hh->second});
    settled_pair[ordered(w.oxygen, w.hydrogen1)] = 1;
    settled_pair[ordered(w.oxygen, w.hydrogen2)] = 1;
    settled_pair[ordered(w.hydrogen1, w.hydrogen2)] = 1;
  }

  // The rest goes to CCMA.
  for (const auto& dc : system.constraints) {
    if (settled_pair.count(ordered(dc.i, dc.j))) continue;
    const double w = inverse_mass_[static_cast<std::size_t>(dc.i)] + inverse_mass_[static_cast<std::size_t>(dc.j)];
    ccma_.push_back({dc.i, dc.j, dc.distance_nm, 1.0 / w});
  }
}

// CCMA's preconditioner: the coupling matrix of constraints sharing an atom, inverted per coupled group.
void ConstraintPlan::invert_coupling(const System& system) {
  const int n = system.num_particles();
  const int nc = static_cast<int>(ccma_.size());
  inverse_coupling_.assign(static_cast<std::size_t>(nc), {});
  if (nc == 0) return;

  // Constraints touching each atom; equilibrium angles by (end, vertex, end).
  std::vector<std::vector<int>> atom_constraints(static_cast<std::size_t>(n));
  for (int c = 0; c < nc; ++c) {
    atom_constraints[static_cast<std::size_t>(ccma_[static_cast<std::size_t>(c)].a)].push_back(c);
    atom_constraints[static_cast<std::size_t>(ccma_[static_cast<std::size_t>(c)].b)].push_back(c);
  }
  std::map<std::pair<int, std::pair<int, int>>, double> angle_at;  // (vertex, ordered ends) -> angle
  for (const auto& ang : system.angles) angle_at[{ang.j, ordered(ang.i, ang.k)}] = ang.angle_rad;
  std::map<std::pair<int, int>, int> ccma_index;
  for (int c = 0; c < nc; ++c)
    ccma_index[ordered(ccma_[static_cast<std::size_t>(c)].a, ccma_[static_cast<std::size_t>(c)].b)] = c;

  // Coupling matrix K (rows j, columns k): K_jj = 1; for constraints sharing atom s, with other ends
  // a (of j) and c (of k): K_jk = w_s / (w_j0 + w_j1) * cos(angle a-s-c).
  std::vector<std::vector<std::pair<int, double>>> coupling(static_cast<std::size_t>(nc));
  std::vector<int> parent(static_cast<std::size_t>(nc));
  std::iota(parent.begin(), parent.end(), 0);
  for (int j = 0; j < nc; ++j) {
    const Ccma& cj = ccma_[static_cast<std::size_t>(j)];
    for (int shared : {cj.a, cj.b}) {
      const int end_j = shared == cj.a ? cj.b : cj.a;
      for (int k : atom_constraints[static_cast<std::size_t>(shared)]) {
        if (k == j) continue;
        const Ccma& ck = ccma_[static_cast<std::size_t>(k)];
        const int end_k = shared == ck.a ? ck.b : ck.a;
        parent[static_cast<std::size_t>(find_root(parent, j))] = find_root(parent, k);
        double cosine = 0.0;
        bool found = false;
        auto third = ccma_index.find(ordered(end_j, end_k));
        if (third != ccma_index.end()) {
          const double d1 = cj.distance, d2 = ck.distance, d3 = ccma_[static_cast<std::size_t>(third->second)].distance;
          cosine = (d1 * d1 + d2 * d2 - d3 * d3) / (2.0 * d1 * d2);
          found = true;
        } else {
          auto ang = angle_at.find({shared, ordered(end_j, end_k)});
          if (ang != angle_at.end()) {
            cosine = std::cos(ang->second);
            found = true;
          }
        }
        if (!found) continue;
        const double scale = inverse_mass_[static_cast<std::size_t>(shared)] * cj.reduced_mass;
        coupling[static_cast<std::size_t>(j)].emplace_back(k, scale * cosine);
      }
    }
  }

  // Invert K per connected component (it is block diagonal); keep elements above the cutoff,
  // scaled by d_k / d_j (the multipliers act on constraint vectors, not unit vectors).
  std::map<int, std::vector<int>> components;
  for (int c = 0; c < nc; ++c) components[find_root(parent, c)].push_back(c);
  for (const auto& [root, members] : components) {
    (void)root;
    coupled_groups_.push_back(members);
    const int m = static_cast<int>(members.size());
    if (m == 1) {
      inverse_coupling_[static_cast<std::size_t>(members[0])].emplace_back(members[0], 1.0);
      continue;
    }
    std::map<int, int> local;
    for (int i = 0; i < m; ++i) local[members[static_cast<std::size_t>(i)]] = i;
    Eigen::MatrixXd k_matrix = Eigen::MatrixXd::Identity(m, m);
    for (int i = 0; i < m; ++i)
      for (const auto& [col, value] : coupling[static_cast<std::size_t>(members[static_cast<std::size_t>(i)])])
        k_matrix(i, local.at(col)) += value;
    const Eigen::MatrixXd inverse = k_matrix.partialPivLu().inverse();
    for (int i = 0; i < m; ++i) {
      const int gi = members[static_cast<std::size_t>(i)];
      for (int j = 0; j < m; ++j) {
        const int gj = members[static_cast<std::size_t>(j)];
        const double value = inverse(i, j) * ccma_[static_cast<std::size_t>(gj)].distance /
                             ccma_[static_cast<std::size_t>(gi)].distance;
        if (i == j || std::fabs(value) > kMatrixElementCutoff)
          inverse_coupling_[static_cast<std::size_t>(gi)].emplace_back(gj, value);
      }
    }
  }
  std::sort(coupled_groups_.begin(), coupled_groups_.end(),
            [](const std::vector<int>& x, const std::vector<int>& y) { return x.front() < y.front(); });
}

double ConstraintPlan::max_relative_deviation(const std::vector<Vec3d>& positions) const {
  double worst = 0.0;
  for (std::size_t c = 0; c < all_pairs_.size(); ++c) {
    const Vec3d d = positions[static_cast<std::size_t>(all_pairs_[c].first)] -
                    positions[static_cast<std::size_t>(all_pairs_[c].second)];
    worst = std::max(worst, std::fabs(std::sqrt(dot(d, d)) - all_distances_[c]) / all_distances_[c]);
  }
  return worst;
}

}  // namespace mdsim
