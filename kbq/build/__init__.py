"""Build time: load Turtle, validate with SHACL, reason to a fixpoint, write the snapshot.

The only package that imports rdflib, pyshacl, owlrl or reasonable."""
