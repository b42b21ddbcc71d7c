//! The optimizer's benchmarks, printed in one run:
//! `cargo bench -p couler-optimizer --bench optimizer`.
//!
//! 1. The auto-parallel split of generated 10k- and 100k-step DAGs: time,
//!    linearity, parts, critical path and parallelism before and after.
//! 2. Hyperparameter search: step-seconds grid, random and successive
//!    halving spend to find the best of the same space.

mod split;
mod tune;

fn main() {
    split::main();
    println!();
    tune::main();
}
