//! Embeds the git commit the binary was built from (bench JSON records it).
fn main() {
    let sha = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    // --no-optional-locks: `git status` would otherwise rewrite a stale index (as a fresh
    // clone's is), which the rerun-if-changed below then takes for a change: every second
    // cargo command rebuilt the binary and its tests.
    let dirty = std::process::Command::new("git")
        .args([
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=no",
        ])
        .output()
        .ok()
        .map(|o| !o.stdout.is_empty())
        .unwrap_or(false);
    println!(
        "cargo:rustc-env=FDLAB_GIT_SHA={sha}{}",
        if dirty { "-dirty" } else { "" }
    );
    println!("cargo:rerun-if-changed=../../.git/HEAD");
    println!("cargo:rerun-if-changed=../../.git/index");
    // An edit to any crate's source makes the tree dirty without touching the index: without
    // this, a binary built from uncommitted code kept the clean sha of its first build, and
    // bench JSON named a commit that did not contain the kernels it measured.
    println!("cargo:rerun-if-changed=../../crates");
}
