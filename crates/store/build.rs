// `sqlx::migrate!` embeds `migrations/` at compile time; without this a new
// migration file would not rebuild the crate (see the macro's documentation).
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
