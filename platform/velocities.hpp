// Initial velocities and centre-of-mass motion, the same on every platform (host code; the CUDA
// platform uploads the result). Units: nm/ps, amu, K.
#pragma once

#include <cstdint>
#include <vector>

#include "physics/vec3.hpp"

namespace mdsim {

// InputError unless the temperature is finite and not negative.
void check_initial_temperature(double temperature_k);

// Maxwell-Boltzmann velocities at temperature_k: particle i with inverse mass w_i > 0 gets
// sqrt(kT w_i) times the normals gaussian3(seed, kStreamInitialVelocities, 0, i) (Philox, so any
// platform draws the same numbers); massless particles get zero.
std::vector<Vec3d> thermal_velocities(const std::vector<double>& inverse_mass, double temperature_k,
                                      std::uint64_t seed);

// Subtracts the centre-of-mass velocity (mass-weighted over every particle) from the particles with
// mass; no change when the total mass is zero.
void remove_com_velocity(std::vector<Vec3d>& velocities, const std::vector<double>& mass_amu,
                         const std::vector<double>& inverse_mass);

}  // namespace mdsim
