// The `mdsim` Python package's extension (_mdsim): engine::Simulation with its state as zero-copy arrays
// (docs/python.md). Units as everywhere in mdsim: nm, ps, kJ/mol, K, amu, e.
//
// Views: `positions`, `velocities` and `forces` are the context's own storage (Context::state_array). On the
// CPU platform they are numpy arrays whose base keeps the Simulation alive; on CUDA they are DeviceArray
// objects exposing __cuda_array_interface__ (version 3, the engine's stream). A view handed out may be
// written at any time, so before each operation that reads the state the Simulation tells the context
// (state_written) for every field a view of which exists.
#include <pybind11/eval.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlpack/dlpack.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/errors.hpp"
#include "engine/evaluator.hpp"
#include "engine/model.hpp"
#include "engine/platform.hpp"
#include "engine/replicas.hpp"
#include "engine/simulation.hpp"
#include "engine/stop_signals.hpp"
#include "io/config.hpp"
#include "io/units.hpp"
#include "platform/context.hpp"
#include "platform/nonbonded_plan.hpp"
#include "mdsim_version.hpp"
#include "python/module_parts.hpp"

namespace py = pybind11;
using namespace mdsim;

namespace {

// A state array's name and unit, for messages.
struct FieldInfo {
  const char* name;
  const char* unit;
};
FieldInfo field_info(StateField f) {
  switch (f) {
    case StateField::Positions: return {"positions", "nm"};
    case StateField::Velocities: return {"velocities", "nm/ps"};
    case StateField::Forces: return {"forces", "kJ/mol/nm"};
  }
  return {"?", "?"};
}
const char* field_name(StateField f) { return field_info(f).name; }
const char* field_unit(StateField f) { return field_info(f).unit; }

// The constructors' keyword arguments platform= and seed=, over the config's (None: the config's own).
struct Overrides {
  py::object platform = py::none();
  py::object seed = py::none();
  bool quiet = false;  // no platform notice, minimisation line or progress
};

// Overrides applied to a parsed config; TypeError / ValueError naming the argument when one is not what it takes.
void apply_overrides(RunConfig& config, const Overrides& o) {
  if (!o.platform.is_none()) {
    if (!py::isinstance<py::str>(o.platform))
      throw py::type_error("platform: expected \"cpu\", \"cuda\" or \"auto\", got " + std::string(py::repr(o.platform)));
    const std::string name = o.platform.cast<std::string>();
    if (name != "cpu" && name != "cuda" && name != "auto")
      throw py::value_error("platform: expected \"cpu\", \"cuda\" or \"auto\", got " + std::string(py::repr(o.platform)));
    config.platform.name = name;
  }
  if (!o.seed.is_none()) {
    if (PyBool_Check(o.seed.ptr()) || !PyIndex_Check(o.seed.ptr()))
      throw py::type_error("seed: expected a whole number (int), got " + std::string(py::repr(o.seed)));
    const py::int_ value = py::reinterpret_steal<py::int_>(PyNumber_Index(o.seed.ptr()));
    if (!value) throw py::error_already_set();
    const unsigned long long seed = PyLong_AsUnsignedLongLong(value.ptr());
    if (PyErr_Occurred() || seed == 0) {
      PyErr_Clear();
      throw py::value_error("seed: expected a whole number from 1 to 2**64 - 1 (None: the config's, or one chosen "
                            "at random), got " + std::string(py::repr(o.seed)));
    }
    config.integrator.seed = seed;  // stages take the run's seed (stage_run_config)
  }
}

// A simulation or ensemble (Made: PySimulation, PyEnsemble; made from a config, its text and quiet) from a config
// file, or from config text (`source` names it in error messages: "<yaml>", "<config>"), with the call's overrides.
template <typename Made>
std::shared_ptr<Made> made_from_file(const std::string& path, const Overrides& o) {
  std::string text;
  RunConfig config = load_config(path, &text);
  apply_overrides(config, o);
  return std::make_shared<Made>(std::move(config), std::move(text), o.quiet);
}
template <typename Made>
std::shared_ptr<Made> made_from_text(const std::string& text, const std::string& base_dir, const std::string& source,
                                     const Overrides& o) {
  RunConfig config = parse_config(text, source, base_dir);
  apply_overrides(config, o);
  return std::make_shared<Made>(std::move(config), text, o.quiet);
}

class PyExternalForce;

// The Python forces a simulation or ensemble added, by handle (what add_force returns; remove_force takes one out).
template <typename Force>
struct PyForces {
  std::map<int, std::shared_ptr<Force>> by_handle;
  int added = 0;

  // The next handle, once `callback` is known to be callable (`returns`: what it returns, for the message).
  int next_handle(const py::object& callback, const char* returns) {
    if (!PyCallable_Check(callback.ptr()))
      throw py::type_error(fmt::format("add_force: expected a callable f(positions, forces, box) -> {}", returns));
    return ++added;
  }
  // The force of `handle`, taken out (ValueError when there is none).
  std::shared_ptr<Force> take(int handle) {
    const auto it = by_handle.find(handle);
    if (it == by_handle.end())
      throw py::value_error(fmt::format("remove_force: no force with handle {} (add_force returned the handles; a "
                                        "removed force is gone)",
                                        handle));
    std::shared_ptr<Force> force = std::move(it->second);
    by_handle.erase(it);
    return force;
  }
};

// The request of a simulation or ensemble made from Python: quiet=True prints no notices, minimisation line or
// progress; Ctrl-C during run() or step() stops at the next restart point, outputs whole.
RunRequest python_request(std::string config_text, bool quiet) {
  RunRequest request;
  request.config_text = std::move(config_text);
  request.quiet = quiet;
  request.platform_notice = !quiet;
  request.stop = &StopSignals::requested();
  return request;
}

// A Simulation and the views it has handed out.
class PySimulation {
 public:
  PySimulation(RunConfig config, std::string config_text, bool quiet) {
    sim_ = std::make_unique<Simulation>(std::move(config), python_request(std::move(config_text), quiet));
  }

  Simulation& sim() { return *sim_; }
  // Whatever a view may have written becomes the state the next operation starts from: called before every
  // operation that reads the state.
  void take_view_writes() {
    if (positions_out_) sim_->context().state_written(StateField::Positions);
    if (velocities_out_) sim_->context().state_written(StateField::Velocities);
  }
  Context& context() {
    take_view_writes();
    return sim_->context();
  }
  // The forces add_force added (state() reports each one's energy).
  PyForces<PyExternalForce> forces;
  py::object reporters = py::none();  // the Python package's reporter list (python/mdsim/reporters.py)
  // Set while step(), run() or minimize() runs: a force callback that calls back into the simulation is refused.
  bool busy = false;
  void handed_out(StateField f) {
    if (f == StateField::Positions) positions_out_ = true;
    if (f == StateField::Velocities) velocities_out_ = true;
    any_view_out_ = true;
  }
  // A staged run() or load_checkpoint() that continues on a new context would leave the views handed out pointing
  // at freed memory.
  void check_context_kept(const char* what) const {
    if (any_view_out_ && sim_->may_switch_context())
      throw InputError(std::string(what) + ": the config's stages differ in integrator or barostat, so the simulation "
                       "may continue on a new context, and the positions / velocities / forces arrays taken before "
                       "would point at freed memory: take them afterwards, or keep the stages' integrator and "
                       "barostat alike");
  }

 private:
  std::unique_ptr<Simulation> sim_;
  bool positions_out_ = false, velocities_out_ = false, any_view_out_ = false;
};

// A force callback that calls back into the simulation gets an error, not a recursion.
void check_not_busy(const PySimulation& s, const char* what) {
  if (!s.busy) return;
  PyErr_SetString(PyExc_RuntimeError,
                  (std::string(what) + ": the simulation is inside step(), run() or minimize() (called from a force "
                   "callback?); a callback may only read its arrays and add to its forces")
                      .c_str());
  throw py::error_already_set();
}

// For the length of one operation: the simulation marked busy and SIGINT caught as a stop request (Python's
// handler comes back afterwards); raise_if_interrupted() then turns a caught Ctrl-C into KeyboardInterrupt.
class Operation {
 public:
  Operation(PySimulation& s, const char* what) : sim_(s) {
    check_not_busy(s, what);
    s.busy = true;
    StopSignals::requested().store(false);
  }
  ~Operation() { sim_.busy = false; }
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;
  void raise_if_interrupted() {
    if (!StopSignals::requested().exchange(false)) return;
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }

 private:
  PySimulation& sim_;
  StopSignals signals_{/*sigterm_too=*/false};
};

// A count of steps: a Python int (or anything with __index__, as numpy's), not negative. TypeError / ValueError
// naming the argument otherwise.
long long steps_argument(const py::handle& value, const char* what = "step(steps)") {
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr()))
    throw py::type_error(fmt::format("{}: steps must be a whole number (int), got {} {}", what,
                                     std::string(py::str(py::type::of(value).attr("__name__"))),
                                     std::string(py::repr(value))));
  int overflow = 0;
  const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) throw py::error_already_set();
  const long long n = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0 || n < 0)
    throw py::value_error(fmt::format("{}: steps must be from 0 to {}, got {}", what,
                                      std::numeric_limits<long long>::max(), std::string(py::repr(value))));
  return n;
}

// A physical value in MD units from Python: a number (MD units), a string with a unit ("310 K", "2 fs", "1/ps") or an
// openmm.unit Quantity (converted with `openmm_unit`, an expression over openmm.unit: "kelvin", "picosecond**-1").
// TypeError / ValueError naming `what` otherwise.
double quantity_argument(const py::handle& value, Dimension d, const std::string& what, const char* openmm_unit) {
  if (py::isinstance<py::str>(value)) {
    const QuantityParse q = parse_quantity(value.cast<std::string>(), d);
    if (!q.value) throw py::value_error(what + ": " + q.error);
    return *q.value;
  }
  if (!PyBool_Check(value.ptr()) && (py::isinstance<py::float_>(value) || PyIndex_Check(value.ptr()) ||
                                     py::hasattr(value, "__float__")) &&
      !py::hasattr(value, "value_in_unit"))
    return value.cast<double>();
  if (py::hasattr(value, "value_in_unit") && py::hasattr(value, "unit")) {  // an openmm.unit Quantity
    py::dict scope;
    scope["unit"] = py::module_::import("openmm.unit");
    const py::object target = py::eval(std::string("unit.") + openmm_unit, scope);
    try {
      return value.attr("value_in_unit")(target).cast<double>();
    } catch (const py::error_already_set& e) {
      throw py::value_error(fmt::format("{}: {} is not a {} ({}): {}", what, std::string(py::str(value)),
                                        dimension_name(d), md_unit(d), e.what()));
    }
  }
  const std::string example = d == Dimension::Frequency ? "1/ps" : fmt::format("1 {}", md_unit(d));
  throw py::type_error(fmt::format("{}: expected a number in {}, a string with a unit (\"{}\") or an openmm.unit "
                                   "Quantity, got {}",
                                   what, md_unit(d), example, std::string(py::repr(value))));
}

// run()'s length in steps: steps= (a count) or time= (a string with a time unit, or a number in ps, a whole number
// of time steps); none when neither is given (the config's run.steps).
std::optional<long long> run_length(PySimulation& s, const py::object& steps, const py::object& time) {
  if (!steps.is_none() && !time.is_none())
    throw py::type_error("run(): give steps= or time=, not both");
  if (!steps.is_none()) {
    return steps_argument(steps, "run(steps)");
  }
  if (time.is_none()) return std::nullopt;
  const double ps = quantity_argument(time, Dimension::Time, "run(time)", "picosecond");
  const double dt = s.sim().config().integrator.timestep_ps;
  const double n = std::round(ps / dt);
  if (!std::isfinite(ps) || ps < 0.0 || std::abs(n * dt - ps) > 1e-6 * dt || n > 9.0e18)
    throw py::value_error(fmt::format("run(time): {} is not a whole number of time steps of {} ps from 0 (the "
                                      "integrator's timestep); steps= takes a count",
                                      std::string(py::str(time)), dt));
  return static_cast<long long>(n);
}

// A device array of the CUDA platform as __cuda_array_interface__ sees it (v3).
struct DeviceArray {
  py::object owner;  // keeps the memory alive (None for the arrays a force callback gets: valid during the call)
  Context* context;  // for stream ordering (alive as long as `owner`, or during the callback)
  StateArray array;
  StateField field;
  std::shared_ptr<bool> valid = std::make_shared<bool>(true);  // false once a callback's call has returned
  std::size_t replicas = 0;  // > 0: a replica batch's array, (replicas, rows, 3), replica r's rows after r - 1's
  // Why, once not valid.
  const char* gone = "was handed to a force callback and is gone now that the call returned; copy what you need during "
                     "the call";

  // (rows, 3), or (replicas, rows, 3); strides in doubles.
  std::vector<std::int64_t> shape() const {
    if (replicas == 0) return {static_cast<std::int64_t>(array.rows), 3};
    return {static_cast<std::int64_t>(replicas), static_cast<std::int64_t>(array.rows), 3};
  }
  std::vector<std::int64_t> strides() const {
    const auto row = static_cast<std::int64_t>(array.row_stride);
    if (replicas == 0) return {row, 1};
    return {row * static_cast<std::int64_t>(array.rows), row, 1};
  }

  void check_valid() const {
    if (!*valid)
      throw py::value_error(std::string("this ") + field_name(field) + " array " + gone);
  }

  py::dict interface() const {
    check_valid();
    py::dict d;
    std::vector<std::int64_t> byte_strides = strides();
    for (std::int64_t& b : byte_strides) b *= static_cast<std::int64_t>(sizeof(double));
    d["shape"] = py::tuple(py::cast(shape()));
    d["typestr"] = "<f8";
    d["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(array.data), false);
    d["version"] = 3;
    d["strides"] = py::tuple(py::cast(byte_strides));
    // The stream the engine orders its work on; consumers synchronise with it (0 would mean the legacy
    // default stream, which this is not).
    d["stream"] = reinterpret_cast<std::uintptr_t>(array.stream);
    return d;
  }

  // DLPack (version 0.6 capsules, "dltensor"): the consumer's stream waits for the engine's work so far.
  py::object dlpack(const py::object& stream) const;
};

// What a DLPack capsule keeps alive: the owner, and the shape and strides the tensor points to.
struct DlpackContext {
  py::object owner;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
};

void delete_managed_tensor(DLManagedTensor* tensor) {
  {
    py::gil_scoped_acquire gil;
    delete static_cast<DlpackContext*>(tensor->manager_ctx);
  }
  delete tensor;
}

void delete_unconsumed_capsule(PyObject* capsule) {
  // A consumer renames the capsule "used_dltensor" and calls the deleter itself; otherwise it is ours.
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (tensor && tensor->deleter) tensor->deleter(tensor);
  }
}

py::object DeviceArray::dlpack(const py::object& stream) const {
  check_valid();
  // The stream argument as the Python array API defines it for CUDA: None or 1 the legacy default stream,
  // 2 the per-thread default stream, -1 no ordering, otherwise a cudaStream_t.
  if (!stream.is_none() && !py::isinstance<py::int_>(stream))
    throw py::type_error("__dlpack__: stream must be an int or None");
  const std::int64_t s = stream.is_none() ? 1 : stream.cast<std::int64_t>();
  if (s == 0) throw py::value_error("__dlpack__: stream 0 is ambiguous for CUDA; pass 1 for the legacy default stream");
  if (s != -1) {
    if (context) context->order_stream_after_context(reinterpret_cast<void*>(static_cast<std::intptr_t>(s)));
  }
  auto* ctx = new DlpackContext{owner, shape(), strides()};
  auto* tensor = new DLManagedTensor{};
  tensor->dl_tensor.data = array.data;
  tensor->dl_tensor.device = DLDevice{kDLCUDA, array.device_index};
  tensor->dl_tensor.ndim = static_cast<std::int32_t>(ctx->shape.size());
  tensor->dl_tensor.dtype = DLDataType{kDLFloat, 64, 1};
  tensor->dl_tensor.shape = ctx->shape.data();
  tensor->dl_tensor.strides = ctx->strides.data();
  tensor->dl_tensor.byte_offset = 0;
  tensor->manager_ctx = ctx;
  tensor->deleter = delete_managed_tensor;
  PyObject* capsule = PyCapsule_New(tensor, "dltensor", delete_unconsumed_capsule);
  if (capsule == nullptr) {
    delete_managed_tensor(tensor);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}

// A numpy view (N x 3 float64) of host memory; `base` keeps it alive (with a base, numpy views, not copies).
py::array host_array(const StateArray& a, const py::handle& base) {
  return py::array(py::dtype::of<double>(), {static_cast<py::ssize_t>(a.rows), py::ssize_t{3}},
                   {static_cast<py::ssize_t>(a.row_stride * sizeof(double)), py::ssize_t{sizeof(double)}}, a.data,
                   base);
}

py::object view(const std::shared_ptr<PySimulation>& s, StateField field) {
  const StateArray a = s->context().state_array(field);
  s->handed_out(field);
  if (!a.on_device) return host_array(a, py::cast(s));  // the base is the PySimulation
  return py::cast(DeviceArray{py::cast(s), &s->sim().context(), a, field});
}

// An array for a force callback: valid only during the call (a barostat trial's positions are temporary).
// A DeviceArray is marked invalid when the call returns (through `valid`); numpy arrays cannot be.
py::object borrowed(const StateArray& a, StateField field, const std::shared_ptr<bool>& valid) {
  if (a.on_device) return py::cast(DeviceArray{py::none(), nullptr, a, field, valid});
  return host_array(a, py::capsule(a.data, [](void*) {}));  // a base that frees nothing
}

// What the Python forces share: the callback (released under the GIL), the context that owns the force, and the
// label messages name it by.
class PyCallbackForce : public ExternalForce {
 public:
  PyCallbackForce(py::object callback, const std::string& what, int index, Context* context)
      : callback_(std::move(callback)), context_(context) {
    label_ = "the force added by " + what + " #" + std::to_string(index);
    if (py::hasattr(callback_, "__name__")) label_ += " (" + std::string(py::str(callback_.attr("__name__"))) + ")";
  }
  ~PyCallbackForce() override {
    py::gil_scoped_acquire gil;
    callback_ = py::object();
  }
  std::string name() const override { return label_; }

 protected:
  // callback(positions, forces, box) with the arrays `arrays(valid)` makes (a pair); `valid` is cleared however the
  // call ends, so arrays kept past it refuse to be used. Call with the GIL held.
  template <typename Arrays>
  py::object call(const Boxd* box, Arrays&& arrays) {
    const auto valid = std::make_shared<bool>(true);
    struct Expire {
      std::shared_ptr<bool> flag;
      ~Expire() { *flag = false; }
    } expire{valid};
    const py::object box_nm = box != nullptr ? py::object(python::box_array(*box)) : py::none();
    const auto [positions, forces] = arrays(valid);
    return callback_(positions, forces, box_nm);
  }
  // A device value is read on its library's current stream, which is usually the legacy default stream: that
  // stream waits for the callback's work on the engine's stream first.
  void order_legacy_stream() { context_->order_stream_after_context(reinterpret_cast<void*>(std::intptr_t{1})); }

  py::object callback_;
  Context* context_;  // owns this force
  std::string label_;
};

// sim.add_force(callback): callback(positions, forces, box) inside every force evaluation. It adds its
// forces (kJ/mol/nm) into `forces` and returns its energy (kJ/mol): a number, a 0-d array, or None. The
// return value is converted only when the engine wants the energy, so a device scalar costs no
// synchronisation during steps.
class PyExternalForce final : public PyCallbackForce {
 public:
  PyExternalForce(py::object callback, int index, Context* context)
      : PyCallbackForce(std::move(callback), "add_force", index, context) {}
  double add(const StateArray& positions, const StateArray& forces, const Boxd* box, bool energy_wanted) override {
    py::gil_scoped_acquire gil;
    const py::object result = call(box, [&](const std::shared_ptr<bool>& valid) {
      return std::pair{borrowed(positions, StateField::Positions, valid), borrowed(forces, StateField::Forces, valid)};
    });
    if (!energy_wanted) return 0.0;
    last_energy = 0.0;
    if (result.is_none()) return 0.0;
    if (forces.on_device && !py::isinstance<py::float_>(result) && !py::isinstance<py::int_>(result))
      order_legacy_stream();
    try {
      last_energy = py::cast<double>(result.attr("__float__")());
      return last_energy;
    } catch (const py::error_already_set&) {
      throw RuntimeError(label_ + " returned " + std::string(py::str(py::type::of(result).attr("__name__"))) +
                         ", not an energy: return a number (kJ/mol), a 0-d array or None");
    }
  }
  double last_energy = 0.0;  // kJ/mol, of the last evaluation that wanted the energy
};

// The K values a batch force returned (a sequence, a numpy / CuPy / PyTorch array) as float64, on the host; an
// empty array when it is not such a thing.
py::array_t<double> host_values(const py::object& result) {
  py::object host = result;
  if (py::hasattr(result, "get") && py::hasattr(result, "__cuda_array_interface__")) host = result.attr("get")();
  else if (py::hasattr(result, "detach") && py::hasattr(result, "cpu")) host = result.attr("detach")().attr("cpu")();
  try {
    return py::module_::import("numpy").attr("asarray")(host, "float64").attr("reshape")(-1).cast<py::array_t<double>>();
  } catch (const py::error_already_set&) {
    return py::array_t<double>();
  }
}

// ens.add_force(callback): callback(positions, forces, box) inside every force evaluation of a replica batch, with K x
// N x 3 arrays of all the replicas (valid during the call); it adds its forces and returns the K replicas' energies
// (kJ/mol: a sequence, a numpy / CuPy / PyTorch array of K values) or None. Converted only when the energy is wanted.
class PyBatchForce final : public PyCallbackForce {
 public:
  PyBatchForce(py::object callback, int index, Context* context)
      : PyCallbackForce(std::move(callback), "Ensemble.add_force", index, context) {}
  double add(const StateArray&, const StateArray&, const Boxd*, bool) override {
    throw RuntimeError(label_ + " acts on a replica batch only");
  }
  void add_batch(const StateArray& positions, const StateArray& forces, int replicas, const Boxd* box,
                 bool energy_wanted, double* energies) override {
    py::gil_scoped_acquire gil;
    const auto k = static_cast<std::size_t>(replicas);
    const py::object result = call(box, [&](const std::shared_ptr<bool>& valid) {
      const auto batch_array = [&](const StateArray& a, StateField field) {
        StateArray rows = a;
        rows.rows = a.rows / k;
        DeviceArray d{py::none(), nullptr, rows, field, valid};
        d.replicas = k;
        return py::cast(d);
      };
      return std::pair{batch_array(positions, StateField::Positions), batch_array(forces, StateField::Forces)};
    });
    if (!energy_wanted || result.is_none()) return;
    order_legacy_stream();
    const py::array_t<double> values = host_values(result);
    if (values.size() != static_cast<py::ssize_t>(k))
      throw RuntimeError(fmt::format("{} returned {}, not the energies of the {} replicas: return {} numbers (kJ/mol) "
                                     "or None",
                                     label_, std::string(py::repr(result)), k, k));
    for (std::size_t r = 0; r < k; ++r) energies[r] = values.at(static_cast<py::ssize_t>(r));
  }
};

// Array of N×3 float64 values for a setter, with a ValueError naming what was expected.
std::vector<Vec3d> vectors_from(const py::handle& values, std::size_t rows, const char* name, const char* unit) {
  py::array arr = py::array::ensure(values);
  if (!arr || arr.ndim() != 2 || static_cast<std::size_t>(arr.shape(0)) != rows || arr.shape(1) != 3)
    throw py::value_error(std::string(name) + ": expected an array of shape (" + std::to_string(rows) +
                          ", 3) in " + unit + ", got " +
                          (arr ? "shape " + std::string(py::str(py::tuple(py::cast(std::vector<py::ssize_t>(
                                                arr.shape(), arr.shape() + arr.ndim())))))
                               : "no array"));
  if (!(arr.dtype().kind() == 'f' || arr.dtype().kind() == 'i' || arr.dtype().kind() == 'u'))
    throw py::value_error(std::string(name) + ": expected real numbers (float64), got dtype " +
                          std::string(py::str(arr.dtype())));
  auto c = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(arr);
  const double* p = c.data();
  std::vector<Vec3d> out(rows);
  for (std::size_t i = 0; i < rows; ++i) out[i] = Vec3d(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
  return out;
}

py::dict energies_dict(const EnergyTerms& e) {
  py::dict d;
  for (const auto& [name, value] : named_terms(e)) d[py::str(name)] = value;
  d["external"] = e.external;  // the add_force callbacks' (included in total)
  d["restraint"] = e.restraint;  // position restraints: a stage's and a topology's (included in total)
  return d;
}

py::dict state_of(PySimulation& s);

py::dict state_dict(PySimulation& s) {
  check_not_busy(s, "state()");
  return state_of(s);
}

// The state as state() returns it; also for observers, during a run.
py::dict state_of(PySimulation& s) {
  StateRequest request;
  request.positions = false;
  request.energy = true;
  const SimulationState st = s.context().state(request);
  if (!std::isfinite(st.potential.total))  // OpenMM would hand back NaN; say why instead
    throw RuntimeError(fmt::format("state(): the potential energy at step {} is not finite ({}): are atoms at the same "
                                   "place (positions set to zeros, or in another order or unit than nm)?",
                                   st.step, nonfinite_terms(st.potential)));
  py::dict d;
  d["step"] = st.step;
  d["time_ps"] = st.time_ps;
  d["potential_energy_kj_per_mol"] = st.potential.total;
  d["kinetic_energy_kj_per_mol"] = st.kinetic_kj_per_mol;
  d["total_energy_kj_per_mol"] = st.potential.total + st.kinetic_kj_per_mol;
  d["temperature_k"] = st.temperature_k;
  py::dict energies = energies_dict(st.potential);
  py::dict each;  // the add_force forces' own energies, by handle
  for (const auto& [handle, force] : s.forces.by_handle) each[py::int_(handle)] = force->last_energy;
  energies["forces"] = each;
  d["energies_kj_per_mol"] = energies;
  if (st.has_box) {
    d["box_nm"] = python::box_array(st.box);
    d["volume_nm3"] = st.box.volume();
  } else {
    d["box_nm"] = py::none();
    d["volume_nm3"] = py::none();
  }
  return d;
}

py::dict minimization_dict(const MinimizationResult& r) {
  py::dict d;
  d["initial_energy_kj_per_mol"] = r.initial_energy;
  d["final_energy_kj_per_mol"] = r.final_energy;
  d["max_force_kj_per_mol_nm"] = r.max_force_kj_per_mol_nm;
  d["iterations"] = r.iterations;
  d["converged"] = r.converged;
  d["interrupted"] = r.interrupted;
  return d;
}

py::dict run_summary_dict(const RunSummary& r) {
  py::dict d;
  d["first_step"] = r.first_step;
  d["last_step"] = r.last_step;
  d["simulated_ps"] = r.simulated_ps;
  d["wall_s"] = r.wall_s;
  d["ns_per_day"] = r.ns_per_day;
  d["seed"] = r.seed;
  d["outputs"] = r.outputs;
  d["already_complete"] = r.already_complete;  // run() again after the config's end: nothing run, no file touched
  return d;
}

// A per-atom property as a numpy array (a copy).
py::array_t<double> per_atom_array(const std::vector<double>& values) {
  return py::array_t<double>(static_cast<py::ssize_t>(values.size()), values.data());
}

// The N x 3 values a positions / velocities setter was given, checked against the system's size.
std::vector<Vec3d> set_values(PySimulation& s, const py::handle& values, StateField field) {
  return vectors_from(values, static_cast<std::size_t>(s.sim().model().system.num_particles()), field_name(field),
                      field_unit(field));
}

// The config's output section as the Python package's reporters read it (python/mdsim/reporters.py): each output a
// dict with its path, or None when off.
py::dict outputs_dict(const OutputConfig& o) {
  const auto path = [&](const std::string& file) { return (std::filesystem::path(o.directory) / file).string(); };
  py::dict d;
  d["directory"] = o.directory;
  d["trajectory"] = py::none();
  if (o.trajectory.interval_steps > 0 && !o.trajectory.file.empty())
    d["trajectory"] = py::dict(py::arg("file") = path(o.trajectory.file), py::arg("interval") = o.trajectory.interval_steps,
                               py::arg("velocities") = o.trajectory.velocities, py::arg("forces") = o.trajectory.forces,
                               py::arg("atoms") = o.trajectory.atoms);
  d["state"] = py::none();
  if (o.state.interval_steps > 0 && !o.state.file.empty())
    d["state"] = py::dict(py::arg("file") = path(o.state.file), py::arg("interval") = o.state.interval_steps);
  d["checkpoint"] = py::none();
  if (!o.checkpoint.file.empty())
    d["checkpoint"] = py::dict(py::arg("file") = path(o.checkpoint.file), py::arg("interval") = o.checkpoint.interval_steps);
  d["final_pdb"] = o.final_pdb.empty() ? py::object(py::none()) : py::object(py::str(path(o.final_pdb)));
  d["progress"] = o.progress;
  return d;
}

// outputs_dict's inverse (the reporters checked their arguments: python/mdsim/reporters.py).
OutputConfig outputs_from(const py::dict& d) {
  OutputConfig o;
  o.directory = d["directory"].cast<std::string>();
  const auto section = [&](const char* key) { return d.contains(key) ? py::object(d[key]) : py::object(py::none()); };
  o.trajectory.interval_steps = o.state.interval_steps = 0;
  o.trajectory.file = o.state.file = o.checkpoint.file = o.final_pdb = "";
  if (const py::object t = section("trajectory"); !t.is_none()) {
    o.trajectory.file = t["file"].cast<std::string>();
    o.trajectory.interval_steps = t["interval"].cast<int>();
    o.trajectory.velocities = t["velocities"].cast<bool>();
    o.trajectory.forces = t["forces"].cast<bool>();
    o.trajectory.atoms = t["atoms"].cast<std::string>();
  }
  if (const py::object st = section("state"); !st.is_none()) {
    o.state.file = st["file"].cast<std::string>();
    o.state.interval_steps = st["interval"].cast<int>();
  }
  if (const py::object c = section("checkpoint"); !c.is_none()) {
    o.checkpoint.file = c["file"].cast<std::string>();
    o.checkpoint.interval_steps = c["interval"].cast<int>();
  }
  if (const py::object f = section("final_pdb"); !f.is_none()) o.final_pdb = f.cast<std::string>();
  o.progress = section("progress").is_none() ? false : section("progress").cast<bool>();
  return o;
}

// A Python object released with the GIL held, wherever the last reference goes (an engine thread's lambda).
std::shared_ptr<py::object> gil_safe(py::object o) {
  return std::shared_ptr<py::object>(new py::object(std::move(o)), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
}

// The reporters in force for later runs and step() calls: the outputs (outputs_dict's form) and the callables
// (interval, f(state)) called with state() at each multiple of their interval.
void set_reporting(PySimulation& s, const py::dict& outputs, bool continue_existing, const py::list& observers) {
  check_not_busy(s, "reporters");
  std::vector<StepObserver> calls;
  for (const py::handle item : observers) {
    const auto pair = item.cast<py::tuple>();
    auto fn = gil_safe(py::reinterpret_borrow<py::object>(pair[1]));
    calls.push_back({pair[0].cast<int>(), [sim = &s, fn](std::int64_t) {
                       py::gil_scoped_acquire gil;
                       (*fn)(state_of(*sim));
                     }});
  }
  const OutputConfig output = outputs_from(outputs);
  s.sim().set_outputs(output, continue_existing);
  s.sim().set_observers(std::move(calls));
}

// The integrator setting a property sets (temperature, friction, time step, constraint tolerance).
void set_integrator_value(PySimulation& s, double IntegratorConfig::*field, double value) {
  check_not_busy(s, "setting the integrator");
  IntegratorConfig next = s.sim().config().integrator;
  next.*field = value;
  s.sim().set_integrator(next);
}

// The box (nm) from a 3 x 3 array of rows a, b, c in OpenMM's reduced form (a along x, b in the xy plane).
Boxd box_from(PySimulation& s, const py::handle& value) {
  const std::vector<Vec3d> rows = vectors_from(value, 3, "box", "nm");
  if (rows[0].y != 0.0 || rows[0].z != 0.0 || rows[1].z != 0.0)
    throw py::value_error("box: the vectors must be in reduced form, as OpenMM's setPeriodicBoxVectors takes them: a "
                          "along x (a = [ax, 0, 0]) and b in the xy plane (b = [bx, by, 0])");
  Boxd box;
  box.a = rows[0];
  box.b = rows[1];
  box.c = rows[2];
  if (!s.sim().model().system.box) throw py::value_error("box: the system is not periodic (no box to set)");
  check_periodic_box(s.sim().model().system.nonbonded, box);
  return box;
}

// ---- the bindings ----

using SimulationClass = py::class_<PySimulation, std::shared_ptr<PySimulation>>;

// The CLI's two kinds of failure: input errors (exit code 2 there; the same file:line:column message) and
// run-time failures (exit code 1).
void bind_errors(py::module_& m) {
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
  m.attr("ConfigError") = m.attr("InputError");  // the name it had first: the same class
  py::register_exception<RuntimeError>(m, "SimulationError", PyExc_RuntimeError);
}

void bind_module_functions(py::module_& m) {
  m.def("_host_device_copies", &cuda_host_device_copies,
        "Host <-> device copies the CUDA platform has made so far (tests: steps copy nothing)");
}

void bind_device_array(py::module_& m) {
  py::class_<DeviceArray>(m, "DeviceArray",
                          "A CUDA device array of the engine's own memory (N x 3 float64, or K x N x 3 for a replica "
                          "batch), for CuPy, Numba, "
                          "PyTorch and others through __cuda_array_interface__")
      .def_property_readonly("__cuda_array_interface__", &DeviceArray::interface)
      .def(
          "__dlpack__",
          [](const DeviceArray& a, const py::object& stream, const py::kwargs&) { return a.dlpack(stream); },
          py::kw_only(), py::arg("stream") = py::none(),
          "A DLPack capsule of the engine's memory; `stream` (the consumer's) waits for the engine's work first")
      .def("__dlpack_device__",
           [](const DeviceArray& a) { return py::make_tuple(static_cast<int>(kDLCUDA), a.array.device_index); })
      .def_property_readonly("shape", [](const DeviceArray& a) { return py::tuple(py::cast(a.shape())); },
                             "(N, 3), or (K, N, 3) for an Ensemble's replica batch")
      .def_property_readonly("device", [](const DeviceArray& a) { return a.array.device_index; },
                             "The CUDA device index the memory is on")
      .def("__repr__", [](const DeviceArray& a) {
        return "<mdsim.DeviceArray " + std::string(field_name(a.field)) + " " +
               std::string(py::str(py::tuple(py::cast(a.shape())))) + " float64 " + field_unit(a.field) +
               " on cuda:" + std::to_string(a.array.device_index) + ">";
      });
}

// Construction, and what the system and its platform are.
void bind_simulation_system(SimulationClass& cls) {
  cls.def(py::init([](const py::object& config, const py::object& platform, const py::object& seed, bool quiet) {
            if (!py::isinstance<py::str>(config) && !py::hasattr(config, "__fspath__"))
              throw py::type_error(fmt::format("Simulation(config): config must be the path of a YAML config (str or "
                                               "os.PathLike), got {}; Simulation.from_yaml(text) takes the text, "
                                               "Simulation.from_config(dict) a dict",
                                               std::string(py::repr(config))));
            return made_from_file<PySimulation>(py::str(py::module_::import("os").attr("fspath")(config)),
                                                Overrides{platform, seed, quiet});
          }),
          py::arg("config"), py::kw_only(), py::arg("platform") = py::none(), py::arg("seed") = py::none(),
          py::arg("quiet") = false,
          "The simulation `mdsim run CONFIG` would run, ready to step (nothing is written until run()).\n"
          "config: the YAML config's path. platform: \"cpu\", \"cuda\" or \"auto\" over the config's platform.name; "
          "seed: the random seed (int >= 1) over the config's integrator.seed; None: the config's. quiet=True: no "
          "platform notice, minimisation line or progress output.")
      .def_static(
          "from_yaml",
          [](const std::string& text, const std::string& base_dir, const py::object& platform, const py::object& seed,
             bool quiet, const std::string& source) {
            return made_from_text<PySimulation>(text, base_dir, source, Overrides{platform, seed, quiet});
          },
          py::arg("text"), py::arg("base_dir") = ".", py::kw_only(), py::arg("platform") = py::none(),
          py::arg("seed") = py::none(), py::arg("quiet") = false, py::arg("_source") = "<yaml>",
          "A simulation from config text (YAML); relative paths in it resolve against base_dir. platform= and seed= "
          "as for Simulation(...).")
      .def_property_readonly(
          "platform", [](PySimulation& s) { return s.sim().platform_kind() == PlatformKind::Cuda ? "cuda" : "cpu"; },
          "The platform the simulation runs on: \"cuda\" or \"cpu\"")
      .def_property_readonly("platform_description", [](PySimulation& s) { return s.sim().platform_description(); },
                             "The platform and its precision, as mdsim run prints it: \"cuda (mixed precision)\"")
      .def_property_readonly("n_atoms", [](PySimulation& s) { return s.sim().model().system.num_particles(); },
                             "The System's particle count (virtual sites included)")
      .def_property_readonly("masses", [](PySimulation& s) { return per_atom_array(s.sim().model().system.mass_amu); },
                             "Per-particle masses (amu; 0 for virtual sites), a numpy copy")
      .def_property_readonly("charges", [](PySimulation& s) { return per_atom_array(s.sim().model().system.charge_e); },
                             "Per-particle charges (e), a numpy copy")
      .def("_topology", [](PySimulation& s) { return python::topology_dict(s.sim().model().topology); })
      .def_property_readonly(
          "stream",
          [](PySimulation& s) {
            return reinterpret_cast<std::uintptr_t>(s.sim().context().state_array(StateField::Positions).stream);
          },
          "The CUDA stream (cudaStream_t as an int) the engine orders its work on; 0 on the CPU platform")
      .def_property_readonly("seed", [](PySimulation& s) { return s.sim().context().seed(); },
                             "The random seed of the integrator's stream (seed=, the config's, a checkpoint's, or "
                             "one chosen at random)");
}

// Minimisation, steps, the config's run, and the state they reach.
void bind_simulation_runs(SimulationClass& cls) {
  cls.def(
         "minimize",
         [](PySimulation& s, double tolerance, int max_iterations) {
           Operation op(s, "minimize()");
           s.take_view_writes();
           const MinimizationResult r = s.sim().minimize(tolerance, max_iterations);
           op.raise_if_interrupted();  // Ctrl-C: the positions stay at the last accepted iterate
           return minimization_dict(r);
         },
         py::arg("tolerance") = 10.0, py::arg("max_iterations") = 0,
         "L-BFGS until the largest atomic force is below tolerance (kJ/mol/nm); max_iterations 0: until converged")
      .def(
          "step",
          [](PySimulation& s, const py::object& steps) {
            const long long n = steps_argument(steps);
            Operation op(s, "step()");
            s.take_view_writes();
            if (s.sim().steps_report() && n > 0) {  // the reporters write at their steps; Ctrl-C stops at a restart point
              {
                py::gil_scoped_release release;
                s.sim().step_reported(n);
              }
              op.raise_if_interrupted();
              return;
            }
            {
              py::gil_scoped_release release;
              constexpr long long kChunk = 100;  // steps between looks at Ctrl-C
              for (long long done = 0; done < n && !StopSignals::requested().load(); done += kChunk)
                s.sim().step(static_cast<int>(std::min(kChunk, n - done)));
            }
            op.raise_if_interrupted();
          },
          py::arg("steps"),
          "Advance `steps` time steps, with the reporters (sim.reporters) writing at their intervals, and no "
          "minimisation or final structure; Ctrl-C stops between steps (at a restart point with reporters) and raises "
          "KeyboardInterrupt")
      .def(
          "run",
          [](PySimulation& s, const py::object& steps, const py::object& time) {
            const std::optional<long long> length = run_length(s, steps, time);
            s.check_context_kept("run()");
            Operation op(s, "run()");
            s.take_view_writes();
            RunSummary r;
            {
              py::gil_scoped_release release;
              r = length ? s.sim().run_for(*length) : s.sim().run();
            }
            op.raise_if_interrupted();  // the run stopped at a restart point with every output whole
            return run_summary_dict(r);
          },
          py::kw_only(), py::arg("steps") = py::none(), py::arg("time") = py::none(),
          "Steps with every reporter of the config's output: section (trajectory, state log, checkpoint, final "
          "structure). Without a length: to the config's run.steps (on a fresh start its minimisation first); at "
          "that end it runs nothing, touches no file and returns already_complete=True. steps=N (int) or "
          "time=\"1 ps\" (a string with a time unit, a number in ps or an openmm.unit Quantity; a whole number of time steps): that many "
          "more steps, beyond run.steps if need be. A run() after an earlier one (or after step()) continues its "
          "outputs, appending after the current step; it never truncates them.")
      .def(
          "close",
          [](PySimulation& s) {
            check_not_busy(s, "close()");
            s.sim().end_steps();
          },
          "Closes the outputs step() keeps open between calls, as a run's end does (the checkpoint at the current "
          "step, the trajectory marked complete); a later step() continues them. The simulation does it itself when "
          "it is deleted, and run() before it starts")
      .def("state", &state_dict, "Step, time (ps), energies (kJ/mol), temperature (K), box (nm), volume (nm^3)");
}

// The state arrays as views of the engine's own memory.
void bind_simulation_arrays(SimulationClass& cls) {
  cls.def_property(
         "positions", [](const std::shared_ptr<PySimulation>& s) { return view(s, StateField::Positions); },
         [](PySimulation& s, const py::handle& v) {
           s.sim().context().set_positions(set_values(s, v, StateField::Positions));
         },
         "Positions (nm), N x 3 float64: the engine's own memory (numpy on the CPU platform, a DeviceArray on CUDA)")
      .def_property(
          "velocities", [](const std::shared_ptr<PySimulation>& s) { return view(s, StateField::Velocities); },
          [](PySimulation& s, const py::handle& v) {
            s.sim().context().set_velocities(set_values(s, v, StateField::Velocities));
          },
          "Velocities (nm/ps), N x 3 float64: the engine's own memory")
      .def(
          "forces_by_term",
          [](PySimulation& s) {
            check_not_busy(s, "forces_by_term()");
            StateRequest request;  // positions
            const SimulationState st = s.context().state(request);
            py::dict out;
            for (const auto& [name, f] :
                 term_forces(s.sim().model().system, st.positions_nm, st.has_box ? &st.box : nullptr)) {
              py::array_t<double> a({static_cast<py::ssize_t>(f.size()), py::ssize_t{3}});
              auto m = a.mutable_unchecked<2>();
              for (py::ssize_t i = 0; i < m.shape(0); ++i)
                for (py::ssize_t c = 0; c < 3; ++c) m(i, c) = f[static_cast<std::size_t>(i)][static_cast<int>(c)];
              out[py::str(name)] = a;
            }
            return out;
          },
          "Each energy term's forces (kJ/mol/nm, N x 3 numpy arrays, by term name: bond, angle, torsion, ..., "
          "nonbonded_direct, nonbonded_reciprocal) at the current positions, computed by the CPU reference platform "
          "in double precision (a single point for analysis, not for every step: a PME system takes as long as a "
          "CPU step). Their sum is the System's force; Python forces and restraints are not among them")
      .def_property_readonly(
          "forces", [](const std::shared_ptr<PySimulation>& s) { return view(s, StateField::Forces); },
          "Forces (kJ/mol/nm) of the current positions, N x 3 float64 (evaluated when the positions changed)");
}

// Python force callbacks, and checkpoints.
void bind_simulation_extensions(SimulationClass& cls) {
  cls.def(
         "add_force",
         [](PySimulation& s, py::object callback) {
           check_not_busy(s, "add_force()");
           const int handle = s.forces.next_handle(callback, "energy or None");
           auto force = std::make_shared<PyExternalForce>(std::move(callback), handle, &s.sim().context());
           s.sim().add_external_force(force);
           s.forces.by_handle[handle] = std::move(force);
           return handle;
         },
         py::arg("callback"),
         "callback(positions, forces, box) is called inside every force evaluation: it adds its forces (kJ/mol/nm) "
         "into `forces` and returns its energy (kJ/mol) or None; the arrays are valid during the call only. Returns "
         "the force's handle (for remove_force, and its energy in state()['energies_kj_per_mol']['forces'])")
      .def(
          "remove_force",
          [](PySimulation& s, int handle) {
            check_not_busy(s, "remove_force()");
            s.sim().remove_external_force(s.forces.take(handle).get());
          },
          py::arg("handle"), "Takes the force add_force returned `handle` for out of every later evaluation")
      .def(
          "save_checkpoint",
          [](PySimulation& s, const std::string& path) {
            check_not_busy(s, "save_checkpoint()");
            s.take_view_writes();
            s.sim().save_checkpoint(path);
          },
          py::arg("path"), "Write the state as the CLI's checkpoint (HDF5, atomically)")
      .def(
          "load_checkpoint",
          [](PySimulation& s, const std::string& path) {
            check_not_busy(s, "load_checkpoint()");
            s.check_context_kept("load_checkpoint()");
            s.sim().load_checkpoint(path);
          },
          py::arg("path"),
          "Continue from a checkpoint of this system written with the same physics settings: positions, velocities, "
          "box, step, barostat state and the random seed and stream position (over the config's or seed=), as "
          "`mdsim run --resume`, so the run continues bit for bit on the same platform. The temperature, friction, "
          "time step and constraint tolerance stay this simulation's (as after OpenMM's loadCheckpoint)");
}

// What OpenMM lets a script change mid-run: the integrator's settings and the box; and the reporters' plumbing.
void bind_simulation_settings(SimulationClass& cls) {
  const auto integrator_property = [&cls](const char* name, double IntegratorConfig::*field, Dimension d,
                                          const char* openmm_unit, const char* doc) {
    cls.def_property(
        name, [field](PySimulation& s) { return s.sim().config().integrator.*field; },
        [field, d, openmm_unit, name](PySimulation& s, const py::handle& value) {
          set_integrator_value(s, field, quantity_argument(value, d, name, openmm_unit));
        },
        doc);
  };
  integrator_property("temperature", &IntegratorConfig::temperature_k, Dimension::Temperature, "kelvin",
                      "The heat bath's temperature (K; the barostat's too). Set it with a number in K, a string "
                      "(\"310 K\") or an openmm.unit Quantity: it holds from the next step on");
  integrator_property("friction", &IntegratorConfig::friction_per_ps, Dimension::Frequency, "picosecond**-1",
                      "The Langevin friction coefficient (1/ps); settable as temperature");
  integrator_property("timestep", &IntegratorConfig::timestep_ps, Dimension::Time, "picosecond",
                      "The time step (ps); settable as temperature (\"2 fs\"), from the next step on");
  cls.def_property(
      "box",
      [](PySimulation& s) -> py::object {
        if (!s.sim().model().system.box) return py::none();
        return python::box_array(s.context().state(StateRequest{false, false}).box);
      },
      [](PySimulation& s, const py::handle& value) {
        check_not_busy(s, "box");
        const Boxd box = box_from(s, value);
        s.context().set_box(box);
      },
      "The periodic box vectors (nm) as a 3 x 3 array, rows a, b, c (None without a box). Setting it changes the "
      "box only, as OpenMM's setPeriodicBoxVectors: the positions stay where they are");
  cls.def("_set_reporting", &set_reporting, py::arg("outputs"), py::arg("continue_existing"), py::arg("observers"));
  cls.def("_outputs", [](PySimulation& s) { return outputs_dict(s.sim().config().output); });
  cls.def_property(
      "_reporters", [](PySimulation& s) { return s.reporters; },
      [](PySimulation& s, py::object list) { s.reporters = std::move(list); });
}

void bind_simulation(py::module_& m) {
  SimulationClass cls(m, "Simulation",
                      "One simulation of a config (the one `mdsim run` takes): Simulation(path), from_yaml(text), "
                      "from_config(dict) or from_openmm(system, topology, positions, integrator); then minimize(), "
                      "step(n), run(steps=/time=), state(), the positions / velocities / forces arrays and "
                      "checkpoints. Units: nm, ps, kJ/mol, K, amu, e (docs/python.md)");
  bind_simulation_system(cls);
  bind_simulation_runs(cls);
  bind_simulation_arrays(cls);
  bind_simulation_extensions(cls);
  bind_simulation_settings(cls);
}

// ---- replica ensembles ----

// An ensemble of a config with `replicas:` in this process (engine Ensemble over SingleProcess), and whether views of
// its batch were handed out.
class PyEnsemble {
 public:
  PyEnsemble(RunConfig config, std::string config_text, bool quiet) {
    ensemble_ = std::make_unique<Ensemble>(std::move(config), python_request(std::move(config_text), quiet), comm_);
  }
  ~PyEnsemble() {
    try {
      close();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mdsim: closing the ensemble's outputs failed: %s\n", e.what());
    }
  }
  PyEnsemble(const PyEnsemble&) = delete;
  PyEnsemble& operator=(const PyEnsemble&) = delete;

  Ensemble& ensemble() {
    if (!ensemble_) throw InputError("the ensemble is closed: make a new one to go on (its checkpoint continues it)");
    return *ensemble_;
  }
  int count() const { return ensemble_ ? ensemble_->replicas() : 0; }
  // A batch's views write the engine's memory: what they wrote becomes the state the next operation starts from.
  void take_view_writes() {
    if (!ensemble_ || !ensemble_->batched()) return;
    if (positions_out) ensemble_->replica(0).context().state_written(StateField::Positions);
    if (velocities_out) ensemble_->replica(0).context().state_written(StateField::Velocities);
  }
  py::dict close() {
    py::dict summary;
    if (!ensemble_) return summary;
    const EnsembleSummary s = ensemble_->finish();
    summary["first_step"] = s.first_step;
    summary["last_step"] = s.last_step;
    summary["wall_s"] = s.wall_s;
    summary["ns_per_day_total"] = s.ns_per_day_total;
    summary["platform"] = s.platform;
    summary["outputs"] = s.outputs;
    *arrays_valid = false;  // the batch's memory goes with it
    ensemble_.reset();
    return summary;
  }
  bool positions_out = false, velocities_out = false;
  std::shared_ptr<bool> arrays_valid = std::make_shared<bool>(true);  // the DeviceArrays handed out, until close()
  PyForces<PyBatchForce> forces;  // Ensemble.add_force's

 private:
  SingleProcess comm_;  // before ensemble_, which refers to it
  std::unique_ptr<Ensemble> ensemble_;
};

// Every replica's `field` as one array (K, N, 3): on a CUDA batch a view of the batch's memory; otherwise a read-only
// numpy copy (the replicas' contexts hold their own memory).
py::object ensemble_array(const std::shared_ptr<PyEnsemble>& e, StateField field) {
  Ensemble& ens = e->ensemble();
  e->take_view_writes();
  if (ens.batched()) {
    Context& first = ens.replica(0).context();
    DeviceArray a{py::cast(e), &first, first.state_array(field), field, e->arrays_valid};
    a.replicas = static_cast<std::size_t>(ens.replicas());
    a.gone = "belonged to an Ensemble that is closed now (its memory went with it)";
    if (field == StateField::Positions) e->positions_out = true;
    if (field == StateField::Velocities) e->velocities_out = true;
    return py::cast(a);
  }
  const auto n = static_cast<py::ssize_t>(ens.replica(0).model().system.num_particles());
  py::array_t<double> out({static_cast<py::ssize_t>(ens.replicas()), n, py::ssize_t{3}});
  double* p = out.mutable_data();
  StateRequest request;
  request.positions = field == StateField::Positions;
  request.velocities = field == StateField::Velocities;
  request.forces = field == StateField::Forces;
  for (int k = 0; k < ens.replicas(); ++k) {
    const SimulationState st = ens.replica(k).context().state(request);
    const std::vector<Vec3d>& v = field == StateField::Positions    ? st.positions_nm
                                  : field == StateField::Velocities ? st.velocities_nm_per_ps
                                                                    : st.forces_kj_per_mol_nm;
    for (const Vec3d& x : v) *p++ = x.x, *p++ = x.y, *p++ = x.z;
  }
  out.attr("flags").attr("writeable") = false;
  return out;
}

// Per replica: potential energy (kJ/mol) and instantaneous temperature (K) at the current step.
py::dict ensemble_energies(PyEnsemble& e) {
  Ensemble& ens = e.ensemble();
  e.take_view_writes();
  StateRequest request;
  request.positions = false;
  request.energy = true;
  py::array_t<double> potential(ens.replicas()), external(ens.replicas()), temperature(ens.replicas()),
      bath(ens.replicas());
  for (int k = 0; k < ens.replicas(); ++k) {
    const SimulationState st = ens.replica(k).context().state(request);
    potential.mutable_at(k) = st.potential.total;
    external.mutable_at(k) = st.potential.external;
    temperature.mutable_at(k) = st.temperature_k;
    bath.mutable_at(k) = ens.bath_temperature(ens.first_replica() + k);
  }
  py::dict d;
  d["step"] = ens.current_step();
  d["potential_energy_kj_per_mol"] = potential;
  d["external_energy_kj_per_mol"] = external;  // add_force's, included in the potential
  d["temperature_k"] = temperature;
  d["bath_temperature_k"] = bath;
  return d;
}

void ensemble_step(PyEnsemble& e, const py::object& steps) {
  const long long n = steps_argument(steps);
  Ensemble& ens = e.ensemble();
  e.take_view_writes();
  StopSignals signals{/*sigterm_too=*/false};
  StopSignals::requested().store(false);
  bool whole = true;
  {
    py::gil_scoped_release release;
    whole = ens.run_to(ens.current_step() + n);
  }
  if (!whole || StopSignals::requested().exchange(false)) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
}

void bind_ensemble(py::module_& m) {
  py::class_<PyEnsemble, std::shared_ptr<PyEnsemble>>(
      m, "Ensemble",
      "The replicas of a config with `replicas:` (docs/replicas.md) in this process, stepped together: on the CUDA "
      "platform one batch, whose positions / velocities / forces are K x N x 3 arrays of the engine's own memory. "
      "Exchange rounds, reporters and checkpoints happen at their steps as in `mdsim run`.")
      .def(py::init([](const py::object& config, const py::object& platform, const py::object& seed, bool quiet) {
             return made_from_file<PyEnsemble>(py::str(py::module_::import("os").attr("fspath")(config)),
                                               Overrides{platform, seed, quiet});
           }),
           py::arg("config"), py::kw_only(), py::arg("platform") = py::none(), py::arg("seed") = py::none(),
           py::arg("quiet") = false,
           "The ensemble `mdsim run CONFIG` would run: its replicas made (minimised on a fresh start when the config "
           "says so) and their outputs opened; platform=, seed=, quiet= as for Simulation()")
      .def_static(
          "from_yaml",
          [](const std::string& text, const std::string& base_dir, const py::object& platform, const py::object& seed,
             bool quiet, const std::string& source) {
            return made_from_text<PyEnsemble>(text, base_dir, source, Overrides{platform, seed, quiet});
          },
          py::arg("text"), py::arg("base_dir") = ".", py::kw_only(), py::arg("platform") = py::none(),
          py::arg("seed") = py::none(), py::arg("quiet") = false, py::arg("_source") = "<yaml>",
          "An ensemble from config text (YAML) with `replicas:`; relative paths resolve against base_dir")
      .def_property_readonly("count", &PyEnsemble::count, "K, the number of replicas")
      .def_property_readonly("batched", [](PyEnsemble& e) { return e.ensemble().batched(); },
                             "True when the replicas are one batch on the GPU (their arrays views of its memory)")
      .def_property_readonly("current_step", [](PyEnsemble& e) { return e.ensemble().current_step(); })
      .def("step", &ensemble_step, py::arg("steps"),
           "Advance every replica `steps` time steps, with the exchange rounds, reporters and checkpoints due on the "
           "way; Ctrl-C stops at the next exchange or restart point and raises KeyboardInterrupt")
      .def("state", &ensemble_energies,
           "Per replica (numpy arrays of K): potential energy (kJ/mol), temperature (K) and bath temperature (K)")
      .def_property_readonly(
          "positions", [](const std::shared_ptr<PyEnsemble>& e) { return ensemble_array(e, StateField::Positions); },
          "Every replica's positions (nm), K x N x 3 float64: a DeviceArray of the batch's memory (write to it to move "
          "atoms), or a read-only numpy copy when the replicas run one by one")
      .def_property_readonly(
          "velocities", [](const std::shared_ptr<PyEnsemble>& e) { return ensemble_array(e, StateField::Velocities); },
          "Every replica's velocities (nm/ps), K x N x 3, as positions")
      .def_property_readonly(
          "forces", [](const std::shared_ptr<PyEnsemble>& e) { return ensemble_array(e, StateField::Forces); },
          "Every replica's forces (kJ/mol/nm) at the current positions, K x N x 3, as positions")
      .def(
          "add_force",
          [](PyEnsemble& e, const py::object& callback) {
            Ensemble& ens = e.ensemble();
            const int handle = e.forces.next_handle(callback, "energies or None");
            auto force = std::make_shared<PyBatchForce>(callback, handle, &ens.replica(0).context());
            ens.add_batch_force(force);
            e.forces.by_handle[handle] = std::move(force);
            return handle;
          },
          py::arg("callback"),
          "callback(positions, forces, box) is called inside every force evaluation of the batch with K x N x 3 device "
          "arrays of all the replicas: it adds its forces (kJ/mol/nm) and returns the K replicas' energies (kJ/mol) "
          "or None. Returns a handle for remove_force. The replicas must be one batch (CUDA)")
      .def(
          "remove_force",
          [](PyEnsemble& e, int handle) { e.ensemble().remove_batch_force(e.forces.take(handle).get()); },
          py::arg("handle"), "Takes a force add_force added out of every later evaluation")
      .def("close", &PyEnsemble::close,
           "The final checkpoint and outputs, as the end of `mdsim run`; returns the summary. Also on deletion");
}

}  // namespace

PYBIND11_MODULE(_mdsim, m) {
  m.doc() = "mdsim engine (units: nm, ps, kJ/mol, K, amu, e)";
  m.attr("__version__") = MDSIM_VERSION_STRING;
  bind_errors(m);
  bind_module_functions(m);
  bind_device_array(m);
  bind_simulation(m);
  bind_ensemble(m);
  python::bind_topology(m);
}
