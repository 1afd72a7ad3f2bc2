//! Tauri's build step: the app's config and icons compiled in.

fn main() {
    tauri_build::build();
}
