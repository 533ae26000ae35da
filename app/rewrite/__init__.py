"""A rewrite's life, from Ctrl+R to accept or reject: the controller that locks the span, the model thread that
runs the engine and turns passes into paint, the drafts side by side, steering (kept words, gaps, length, tone)
and every version a span has had."""
