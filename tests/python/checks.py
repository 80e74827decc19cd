"""What the test scripts in tests/python share (each imports it from its own folder): a check that prints and counts
its failure, the message of an expected exception, and the thermostat check of Simulation.temperature."""
import numpy as np

failures = []  # the `what` of every failed check


def check(condition, what):
    """Prints 'ok' or 'FAIL' and `what`; a failure is counted in `failures`."""
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        failures.append(what)


def raises(call, kind):
    """The message of the `kind` exception call() raises ('no error', or the other exception's type and text)."""
    try:
        call()
        return "no error"
    except kind as err:
        return str(err)
    except Exception as err:  # the wrong kind
        return f"{type(err).__name__}: {err}"


def bath_means(sim, temperature, time, interval):
    """The measured temperature's mean (K) over the last 4/5 of `time` (a run(time=) length), before and after
    setting sim.temperature = `temperature` mid-run: samples from a callable StateReporter every `interval` steps."""
    import mdsim
    samples = []
    sim.reporters.append(mdsim.StateReporter(lambda state: samples.append(state["temperature_k"]), interval))
    means = []
    for change in (False, True):
        if change:
            sim.temperature = temperature
        samples.clear()
        sim.run(time=time)
        means.append(float(np.mean(samples[len(samples) // 5:])))
    return tuple(means)
