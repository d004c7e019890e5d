//! The prh playground: `prh-core` compiled to WebAssembly behind a Leptos (client-side)
//! UI. Build with `trunk build` (index.html at the repository root) or `.ci/web.sh`.
//!
//! This file only wires the tabs:
//! - [`labs`]: one folder per lab ([`spectral`], [`alignment`], [`checkpoint`], [`caption`]);
//! - [`figures`]: drawing, SVG and PNG / SVG / JSON export shared by the labs;
//! - [`widgets`]: the state in the URL ([`url_state`]), file loading, shared controls.

mod figures;
mod labs;
mod widgets;

use crate::labs::{alignment, caption, checkpoint, graph, lesson, live, spectral};
use crate::widgets::url_state;
use leptos::prelude::*;

/// Which lab is shown.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lab {
    Lesson,
    Spectral,
    Graph,
    Live,
    Alignment,
    Checkpoint,
    Caption,
}

impl Lab {
    /// Every lab, in tab order (also the index into [`App`]'s `visited` flags).
    const ALL: [Lab; 7] = [
        Lab::Lesson,
        Lab::Spectral,
        Lab::Graph,
        Lab::Live,
        Lab::Alignment,
        Lab::Checkpoint,
        Lab::Caption,
    ];

    /// The lab's name in the URL (`lab=`) and in its tab's and panel's ids.
    fn key(self) -> &'static str {
        match self {
            Lab::Lesson => "lesson",
            Lab::Spectral => "spectral",
            Lab::Graph => "graph",
            Lab::Live => "live",
            Lab::Alignment => "alignment",
            Lab::Checkpoint => "checkpoint",
            Lab::Caption => "caption",
        }
    }

    /// The lab a URL `lab` key names; the lesson (the landing page) for any other.
    fn from_key(key: &str) -> Lab {
        Lab::ALL
            .into_iter()
            .find(|l| l.key() == key)
            .unwrap_or(Lab::Lesson)
    }

    /// Position in [`Lab::ALL`] (looked up, so the declaration order does not matter).
    fn index(self) -> usize {
        Lab::ALL.iter().position(|l| *l == self).unwrap_or(0)
    }

    /// Builds this lab's component (once, on its first visit).
    fn build(self) -> AnyView {
        match self {
            Lab::Lesson => view! { <lesson::LessonLab /> }.into_any(),
            Lab::Spectral => view! { <spectral::SpectralLab /> }.into_any(),
            Lab::Graph => view! { <graph::GraphLab /> }.into_any(),
            Lab::Live => view! { <live::LiveLab /> }.into_any(),
            Lab::Alignment => view! { <alignment::AlignmentLab /> }.into_any(),
            Lab::Checkpoint => view! { <checkpoint::CheckpointLab /> }.into_any(),
            Lab::Caption => view! { <caption::CaptionLab /> }.into_any(),
        }
    }
}

/// The page: a tab bar and the selected lab. A lab is built on its first visit and then
/// only hidden when another tab is shown, so its controls, loaded files and results stay
/// (and its keys stay in the URL, see [`url_state::update`]).
#[component]
fn App() -> impl IntoView {
    let first = Lab::from_key(&url_state::get("lab", String::new()));
    let lab = RwSignal::new(first);
    let visited = Lab::ALL.map(|l| RwSignal::new(l == first));
    Effect::new(move |_| {
        let l = lab.get();
        // Only the first visit builds the lab; setting `true` again would rebuild it.
        if !visited[l.index()].get_untracked() {
            visited[l.index()].set(true);
        }
        url_state::update(&[("lab", Some(l.key().to_string()))]);
    });
    view! {
        <header>
            <h1>"prh playground"</h1>
            <p class="sub">
                "The Platonic Representation Theorem, runnable: the same Rust code as the "
                <code>"prh-native"</code>
                " CLI, compiled to WebAssembly and running in this page."
            </p>
            <nav>
                <Tab lab=lab l=Lab::Lesson title="Lesson" />
                <Tab lab=lab l=Lab::Spectral title="Spectral lab" />
                <Tab lab=lab l=Lab::Graph title="Draw a world" />
                <Tab lab=lab l=Lab::Live title="Train live" />
                <Tab lab=lab l=Lab::Alignment title="Alignment lab" />
                <Tab lab=lab l=Lab::Checkpoint title="Checkpoint lab" />
                <Tab lab=lab l=Lab::Caption title="Caption lab" />
            </nav>
        </header>
        <main>
            {Lab::ALL.map(|l| view! { <Panel lab=lab l=l seen=visited[l.index()] /> })}
        </main>
    }
}

/// One tab button: shows lab `l` when clicked, marked active while `l` is shown.
#[component]
fn Tab(lab: RwSignal<Lab>, l: Lab, title: &'static str) -> impl IntoView {
    view! {
        <button class="tab" id=format!("tab-{}", l.key()) class:active=move || lab.get() == l on:click=move |_| lab.set(l)>
            {title}
        </button>
    }
}

/// One lab's panel: empty until first shown (`seen`), then kept and only hidden.
#[component]
fn Panel(lab: RwSignal<Lab>, l: Lab, seen: RwSignal<bool>) -> impl IntoView {
    view! {
        <div id=format!("panel-{}", l.key()) style:display=move || if lab.get() == l { "block" } else { "none" }>
            {move || seen.get().then(|| l.build())}
        </div>
    }
}

fn main() {
    // In the metrics worker (labs/alignment/worker.rs) the module is loaded for its exported
    // function only: there is no page to mount.
    if web_sys::window().is_none() {
        return;
    }
    // A Rust panic would otherwise only reach the console as "unreachable executed":
    // log the message and show it in the page so a failure is never a silent freeze.
    std::panic::set_hook(Box::new(|info| {
        let msg = format!("prh playground crashed: {info}");
        web_sys::console::error_1(&msg.clone().into());
        let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        if let (Some(body), Ok(pre)) = (doc.body(), doc.create_element("pre")) {
            pre.set_id("panic");
            pre.set_class_name("error");
            pre.set_text_content(Some(&msg));
            let _ = body.prepend_with_node_1(&pre);
        }
    }));
    leptos::mount::mount_to_body(App);
}

#[cfg(test)]
mod tests {
    use super::Lab;

    /// Every lab has its own key and index, and its key leads back to it.
    #[test]
    fn labs_have_distinct_keys_and_indices() {
        for (i, lab) in Lab::ALL.into_iter().enumerate() {
            assert_eq!(lab.index(), i);
            assert!(Lab::from_key(lab.key()) == lab, "{}", lab.key());
        }
        let mut keys: Vec<&str> = Lab::ALL.iter().map(|l| l.key()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), Lab::ALL.len());
    }
}
