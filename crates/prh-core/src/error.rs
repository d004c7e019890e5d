//! The core's error type. Every variant names what was wrong and, where there is one,
//! the file and field involved, so binaries can print it as is.

use std::path::PathBuf;

/// Errors raised by prh-core.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file was readable but its content is not what was expected.
    #[error("{path}: {field}: {message}")]
    Format {
        path: PathBuf,
        field: String,
        message: String,
    },
    /// An argument or input value is invalid (shape mismatch, out-of-range parameter...).
    #[error("invalid input: {0}")]
    Invalid(String),
    /// A numerical routine failed (e.g. an eigensolver did not converge).
    #[error("numerical failure: {0}")]
    Numerical(String),
}

/// Result alias for prh-core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds an [`Error::Format`] for `path`, naming `field` and what was expected.
    pub fn format(
        path: impl Into<PathBuf>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Error::Format {
            path: path.into(),
            field: field.into(),
            message: message.into(),
        }
    }

    /// Builds an [`Error::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// Builds an [`Error::Invalid`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid(message.into())
    }
}
