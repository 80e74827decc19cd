// The process-wide stop request: set by the signal handlers of engine/stop_signals (SIGINT, and SIGTERM where the
// command asks for it), read by the long loops: the run's step loop (through RunRequest::stop) and, below the engine,
// the minimiser's iterations (platform/minimizer), which no flag can be handed to through the Context interface.
#pragma once

#include <atomic>

namespace mdsim {

// Set by a caught signal; cleared only by whoever acts on it (the run loop leaves it set so the caller sees it).
std::atomic<bool>& stop_requested();

}  // namespace mdsim
