//! The prh playground (placeholder root while the labs land).
use leptos::prelude::*;

fn main() {
    leptos::mount::mount_to_body(|| view! { <p>"prh playground"</p> });
}
