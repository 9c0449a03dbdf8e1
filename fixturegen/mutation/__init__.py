"""Mutation adequacy: plant small bugs (mutants) in an implementation's verifier code, build
its adapter against each, and count which the corpus notices (and which the implementation's
own tests notice). ``model`` is the contract (mutation.json and its schema), ``spans`` applies a
mutant to a scratch copy, ``setup`` reads an adapter's reviewed mutation files (scope, error
table, survivors), ``campaign`` runs one implementation's mutants, ``report`` writes the
summaries. Each language's tool and each implementation's scope stay in its adapter's folder
(``adapters/FOLDER/mutate`` and ``adapters/FOLDER/mutation/``); this package knows none of them.
"""
