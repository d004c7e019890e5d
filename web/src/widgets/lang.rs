//! The page's two languages and a text in both: the lesson's words (English and Korean),
//! and the words of the lab components the lesson embeds, which follow the lesson's
//! language there and stay English in their own tabs.

use leptos::prelude::*;

/// A language of the lesson (and of the figures it shows).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Lang {
    /// English (the labs' language).
    #[default]
    En,
    /// Korean.
    Ko,
}

impl Lang {
    /// The URL value (`lang=en|ko`).
    pub fn key(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ko => "ko",
        }
    }

    /// The language named in a URL, English otherwise.
    pub fn parse(s: &str) -> Lang {
        if s == "ko" { Lang::Ko } else { Lang::En }
    }
}

/// One text in both languages.
#[derive(Clone, Copy)]
pub struct Text {
    /// English.
    pub en: &'static str,
    /// Korean.
    pub ko: &'static str,
}

impl Text {
    /// The text in `lang`.
    pub fn get(&self, lang: Lang) -> &'static str {
        match lang {
            Lang::En => self.en,
            Lang::Ko => self.ko,
        }
    }

    /// The text in the language `lang` holds, read again when it changes: for a view's
    /// text or an attribute (aria-label, title) that follows the lesson's language switch.
    pub fn on(
        self,
        lang: Signal<Lang>,
    ) -> impl Fn() -> &'static str + Copy + Send + Sync + 'static {
        move || self.get(lang.get())
    }
}

/// A [`Text`] from its English and Korean.
pub const fn t(en: &'static str, ko: &'static str) -> Text {
    Text { en, ko }
}
