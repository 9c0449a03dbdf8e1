"""Builds of any version: an implementation's adapter built against a released version from its
package registry, or against a source tree on this machine, and kept in a build cache.

``versions`` orders version strings and reads a version SPEC (``all``, ``>=0.4``, a list);
``registries`` lists what crates.io, the Go module proxy, npm and PyPI serve; ``cache`` is the
build cache (a folder per implementation and version, or per source tree, locked, written
whole); ``build`` copies an adapter's folder into the cache and runs its own ``build`` script
there with ``--version V`` or ``--source PATH``. Each adapter's build and shim specifics stay in
its folder under ``adapters/``; this package knows none of them.
"""
