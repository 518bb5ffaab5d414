//! heddle-eval
