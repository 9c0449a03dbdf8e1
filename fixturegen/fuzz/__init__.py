"""Differential fuzzing (`fixturegen fuzz`): mutants of valid certificates through the
reference verifier, an independent check and real implementations; triage into clusters."""
