//! The open-loop load generator: a schedule of due times, a dispatcher that issues each
//! request when it is due whatever the earlier ones are doing, a pool of workers that
//! execute them, and an in-flight cap beyond which requests are shed.
//!
//! The rules live in small shared pieces — [`Schedule`] (when a request is due),
//! [`Admission`] (the in-flight cap), [`CompletionTally::record`] (latency = completion −
//! due) — used both by the real, threaded dispatcher ([`run_open_loop`]) and by a
//! discrete-event simulation of it on a virtual clock ([`simulate_open_loop`]), which is
//! what the instrument's exact tests run. [`closed`] holds the biased closed-loop driver
//! the tests compare against.

mod admission;
pub mod closed;
pub mod cpu;
mod dispatcher;
mod schedule;
mod sim;
mod tally;

pub use admission::Admission;
pub use dispatcher::{open_loop_origin, run_open_loop, run_open_loop_from};
pub use schedule::{Arrivals, Schedule};
pub use sim::simulate_open_loop;
pub use tally::{CompletionTally, DispatchTally, LiveRung, Outcome, Progress, RequestTimes};
