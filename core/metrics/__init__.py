"""Pure metric computations (no Django imports): agreement between humans, model stability (Pass@k, G-Pass@k),
judge meta-evaluation and bootstrap intervals."""
