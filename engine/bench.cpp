#include "engine/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "kernels/cuda/cuda_context.hpp"
#include "kernels/cuda/device_query.hpp"
#include "kernels/cuda/step_timeline.hpp"

namespace mdsim {

namespace {

using Clock = std::chrono::steady_clock;

// `warmup` steps, then `steps` timed; the velocities' download waits for the queued steps at both ends. Several
// contexts: a replica batch's (each from the same positions), stepped together (the first one's step does the
// work); the figures are the batch's, ns/day summed over the replicas.
StepBench time_steps(const std::vector<Context*>& contexts, const Model& model, const RunConfig& cfg, int warmup,
                     int steps, bool count_builds) {
  for (Context* context : contexts) {
    context->set_positions(model.positions_nm);
    if (!model.system.constraints.empty()) context->apply_constraints(cfg.integrator.constraint_tolerance);
    context->set_velocities_to_temperature(cfg.integrator.temperature_k, 0);
  }
  Context& first = *contexts.front();
  StateRequest sync;
  sync.positions = false;
  sync.velocities = true;
  for (Context* context : contexts) context->step(warmup);
  first.state(sync);
  const int builds_before = count_builds ? cuda_list_builds(first) : 0;
  const auto t0 = Clock::now();
  for (Context* context : contexts) context->step(steps);
  first.state(sync);
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  StepBench t;
  t.steps = steps;
  t.replicas = static_cast<int>(contexts.size());
  if (count_builds) t.list_builds = cuda_list_builds(first) - builds_before;
  t.us_per_step = s * 1e6 / steps;
  t.ns_per_day = t.replicas * cfg.integrator.timestep_ps * 1e-3 * steps * 86400.0 / s;
  return t;
}

double cpu_ms_per_evaluation(ForceEvaluator& evaluator, const Model& model) {
  std::vector<Vec3d> f;
  std::vector<double> ms;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = Clock::now();
    evaluator.compute(model.positions_nm, &f);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[2];
}

// One context, or (replicas > 1) a batch of that many copies (make_replica_batch, each replica with a seed of its
// own): a context per replica.
std::vector<std::unique_ptr<Context>> bench_contexts(const RunConfig& cfg, const Model& model,
                                                     const PlatformChoice& platform, int replicas) {
  if (replicas > 1) {
    const std::vector<DynamicsSettings> settings(static_cast<std::size_t>(replicas), dynamics_settings(cfg));
    return make_replica_batch(model.system, settings, platform, cfg.platform);
  }
  std::vector<std::unique_ptr<Context>> one;
  one.push_back(make_context(model.system, dynamics_settings(cfg), platform, cfg.platform));
  return one;
}

std::vector<Context*> pointers(const std::vector<std::unique_ptr<Context>>& owned) {
  std::vector<Context*> out;
  for (const auto& c : owned) out.push_back(c.get());
  return out;
}

// The steps of bench_contexts' context or batch, stepped together: the device memory they hold, and a single
// context's launches and list builds.
StepBench cuda_steps(const RunConfig& cfg, const Model& model, const PlatformChoice& platform, int steps,
                     int replicas) {
  const std::size_t free_before = cuda_free_memory_bytes();
  const auto owned = bench_contexts(cfg, model, platform, replicas);
  StepBench t = time_steps(pointers(owned), model, cfg, std::min(steps, 500), steps, /*count_builds=*/replicas == 1);
  const std::size_t free_after = cuda_free_memory_bytes();
  t.context_bytes = free_before > free_after ? static_cast<double>(free_before - free_after) : 0.0;
  if (replicas == 1) {
    const CudaStepLaunches l = cuda_step_launches(*owned.front());
    t.graphs = l.graphs;
    t.steps_per_graph = l.steps_per_graph;
    t.kernels_per_step = l.kernels;
    t.separate_kernels_per_step = l.separate_kernels;
  }
  return t;
}

// A context (or a batch) whose graphs record the timeline's points, warmed up, then `steps` single steps, each
// waited for.
std::vector<TimelineRow> cuda_timeline(const RunConfig& cfg, const Model& model, const PlatformChoice& platform,
                                       int steps, int replicas) {
  cuda::enable_step_timeline();
  const auto owned = bench_contexts(cfg, model, platform, replicas);
  (void)time_steps(pointers(owned), model, cfg, 500, 1, false);
  std::vector<TimelineRow> rows;
  for (int s = 0; s < steps; ++s) {
    for (const auto& context : owned) context->step(1);  // a batch's first view steps them all
    for (const cuda::TimelinePoint& p : cuda::read_step_timeline()) {
      auto it = std::find_if(rows.begin(), rows.end(), [&](const TimelineRow& r) { return r.label == p.label; });
      if (it == rows.end()) it = rows.insert(rows.end(), TimelineRow{p.label, 0.0, 1e300, 0.0, 0});
      it->mean_us += p.us;  // the sum until the division below
      it->min_us = std::min(it->min_us, p.us);
      it->max_us = std::max(it->max_us, p.us);
      ++it->steps;
    }
  }
  for (TimelineRow& r : rows) r.mean_us /= r.steps;
  std::sort(rows.begin(), rows.end(), [](const TimelineRow& a, const TimelineRow& b) { return a.mean_us < b.mean_us; });
  return rows;
}

// The config's top-level minimisation, untimed, on the platform to be timed (a raw structure, e.g. CHARMM-GUI's,
// would blow up in the warm-up steps): the model at the minimised positions; none without a `minimize` section.
std::optional<Model> minimized(const RunConfig& cfg, const Model& model, const PlatformChoice& platform) {
  if (!cfg.minimize) return std::nullopt;
  Model out = model;
  auto context = make_context(model.system, dynamics_settings(cfg), platform, cfg.platform);
  context->set_positions(model.positions_nm);
  if (!model.system.constraints.empty()) context->apply_constraints(cfg.integrator.constraint_tolerance);
  context->minimize(cfg.minimize->tolerance_kj_per_mol_nm, cfg.minimize->max_iterations);
  out.positions_nm = context->state(StateRequest{}).positions_nm;  // positions only
  return out;
}

}  // namespace

BenchReport run_bench(const RunConfig& cfg, const Model& input_model, const PlatformChoice& platform, int steps,
                      bool timeline, int replicas) {
  if (replicas > 1 && platform.kind == PlatformKind::Cpu)
    throw InputError(fmt::format("bench --replicas {}: a replica batch runs on the CUDA platform only, and this config "
                                 "runs on the CPU platform",
                                 replicas));
  const std::optional<Model> minimized_model = minimized(cfg, input_model, platform);
  const Model& model = minimized_model ? *minimized_model : input_model;
  BenchReport report;
  report.platform = platform.kind;
  report.replicas = replicas;
  if (platform.kind == PlatformKind::Cpu) {
    {
      auto evaluator = make_evaluator(model.system, platform, cfg.platform);
      report.cpu_ms_per_evaluation = cpu_ms_per_evaluation(*evaluator, model);
    }
    if (steps > 0) {
      auto context = make_context(model.system, dynamics_settings(cfg), platform, cfg.platform);
      const int cpu_steps = std::max(1, steps / 100);  // the CPU reference is ~1000x slower per step
      report.steps = time_steps({context.get()}, model, cfg, 1, cpu_steps, false);
    }
    return report;
  }
  {
    auto evaluator = make_evaluator(model.system, platform, cfg.platform, replicas);
    std::vector<Vec3d> batch;
    for (int r = 0; r < replicas; ++r) batch.insert(batch.end(), model.positions_nm.begin(), model.positions_nm.end());
    report.parts = evaluator->time_parts(batch, 200);
  }
  if (steps > 0) report.steps = cuda_steps(cfg, model, platform, steps, replicas);
  if (timeline) {
    report.timeline_steps = std::max(steps / 10, 100);
    report.timeline = cuda_timeline(cfg, model, platform, report.timeline_steps, replicas);
  }
  return report;
}

}  // namespace mdsim
