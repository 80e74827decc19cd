// `mdsim bench`: a config's system timed on the platform the config chooses, through the same factories a run
// uses (make_evaluator, make_context). Wall-clock figures of this process; the command line prints them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/evaluator.hpp"
#include "engine/model.hpp"
#include "engine/platform.hpp"
#include "model/run_config.hpp"

namespace mdsim {

// Full steps with the config's integrator, constraints and thermostat (reporters off), from the config's
// positions, constrained, with velocities at the integrator's temperature: warm-up steps, then `steps` timed
// (synchronised at both ends).
struct StepBench {
  int steps = 0;
  int replicas = 1;                 // a replica batch's: µs per step of the whole batch, ns/day summed over it
  double us_per_step = 0, ns_per_day = 0;
  // The CUDA platform only:
  int list_builds = -1;             // tile-list builds during the timed steps (-1: not counted)
  int graphs = 0, steps_per_graph = 1, kernels_per_step = 0, separate_kernels_per_step = 0;  // launches
  double context_bytes = 0;         // the context's device memory: free memory before it less after the steps
};

// The CUDA step's timeline: when each named point of a step finished after the step's start (µs), over
// single steps each waited for.
struct TimelineRow {
  std::string label;  // "stream: what has finished"
  double mean_us = 0, min_us = 0, max_us = 0;
  int steps = 0;
};

struct BenchReport {
  PlatformKind platform = PlatformKind::Cpu;
  int replicas = 1;                           // a replica batch's size (CUDA): the figures are the batch's
  double cpu_ms_per_evaluation = 0;           // CPU: energy + forces, median of 5
  std::optional<ForceBenchTimings> parts;      // CUDA: each part of a force evaluation
  std::optional<StepBench> steps;             // when steps were asked for
  int timeline_steps = 0;
  std::vector<TimelineRow> timeline;          // CUDA, when asked for
};

// steps: full steps to time after the force evaluations (0: none; the CPU platform times steps/100, at least
// 1). timeline: also the CUDA step's timeline over max(steps/10, 100) single steps. Everything is timed at the
// positions the config's top-level `minimize` leaves (untimed, on the same platform), when it has one.
// replicas > 1: a replica batch of that many copies (CUDA), every copy from those positions.
BenchReport run_bench(const RunConfig& cfg, const Model& model, const PlatformChoice& platform, int steps,
                      bool timeline, int replicas = 1);

}  // namespace mdsim
