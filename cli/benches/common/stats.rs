//! Figures of the line-client benchmarks (tasks, asking): quantiles of one round's
//! timings, and the median of the rounds'.

use std::time::Duration;

/// The `q` quantile of `v` (sorted here).
pub fn pick(v: &mut [Duration], q: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 * q) as usize).min(v.len() - 1)]
}

/// The median of `v`.
pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}
