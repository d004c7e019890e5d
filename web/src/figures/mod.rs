//! What the labs' figures share: canvas drawing ([`draw`]), the same figures as SVG
//! ([`svg`]), PNG / SVG / JSON downloads ([`export`]) and how numbers are printed
//! ([`numbers`]). Nothing here knows a lab.

pub mod draw;
pub mod export;
pub mod numbers;
pub mod svg;
