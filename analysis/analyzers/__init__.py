"""The analyzers, in one explicit tuple. Each is a module with `NAME` and `analyze(run) -> findings`:
it reads the run, never posts, never raises to signal a hit."""
from analysis.analyzers import (
    code,
    crashes,
    excerpt,
    gradients,
    learning_rate,
    loss,
    memory,
    one_class,
    outputs,
    parameters,
    posterior_collapse,
    printed_checks,
    weights,
)

ANALYZERS = (loss, gradients, learning_rate, crashes, memory, parameters, weights, code, outputs, excerpt,
             printed_checks, one_class, posterior_collapse)
