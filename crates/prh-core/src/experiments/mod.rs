//! **Wing `experiments`** (paper §5-7): the demo on the scene world and the
//! experiments on real data (views-multilingual, views-vision, scaling), with their
//! reports; and SIGReg's own optimum on the scene world ([`sigreg_population`]).
//! May use: every other wing (the top of the house).

pub mod captioner;
pub mod convergence;
pub mod demo;
pub mod live;
pub mod multilingual;
pub mod report;
pub mod scaling_law;
pub mod sigreg_population;
pub mod spectral_tfidf;
pub mod vision;
