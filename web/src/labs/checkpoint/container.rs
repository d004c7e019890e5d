//! What a file handed to the checkpoint lab is, when it is not a safetensors file.
//!
//! A safetensors file is an 8-byte little-endian header length n, then n bytes of JSON
//! (starting with `{`), then the tensor data. The `safetensors` crate reads the length
//! first, so any other file (a zip, a pickle, text) reads as an absurd length and fails
//! with "header too large", which says nothing about the file. This check runs first and
//! names what the file looks like instead (hand-written: the crate has no such probe).

/// Known file signatures (leading bytes) and what they mean here.
const SIGNATURES: [(&[u8], &str); 7] = [
    (
        b"PK\x03\x04",
        "a zip archive (a PyTorch .pt / .pth, or an .npz?)",
    ),
    (b"\x93NUMPY", "a NumPy .npy array"),
    (b"\x80\x02", "a Python pickle (a legacy PyTorch .bin?)"),
    (b"\x80\x04", "a Python pickle (a legacy PyTorch .bin?)"),
    (b"\x89HDF", "an HDF5 file (a Keras .h5?)"),
    (b"GGUF", "a GGUF model (llama.cpp)"),
    (b"\x1f\x8b", "a gzip-compressed file"),
];

/// `Ok` when `bytes` are laid out as a safetensors file (length, then JSON); otherwise a
/// message that names `source`, what the file looks like, and what was expected.
pub fn check_safetensors(source: &str, bytes: &[u8]) -> Result<(), String> {
    let expected = "expected a safetensors file (prh-native export writes one)";
    let layout = safetensors_layout(bytes);
    if layout.is_ok() {
        return Ok(());
    }
    // Only a file that fails the layout is named by its signature: a valid header length
    // can begin with the same bytes as a pickle (0x80 0x02 is a 640-byte header).
    if let Some((_, what)) = SIGNATURES.iter().find(|(sig, _)| bytes.starts_with(sig)) {
        return Err(format!(
            "{source}: this is {what}, not a safetensors file; {expected}"
        ));
    }
    layout.map_err(|why| format!("{source}: {why}; {expected}"))
}

/// Checks the safetensors layout: 8-byte length n <= bytes after it, JSON `{` next.
fn safetensors_layout(bytes: &[u8]) -> Result<(), String> {
    let Some(len) = bytes.get(..8) else {
        return Err(format!(
            "{} bytes, too short for a safetensors file (an 8-byte header length comes first)",
            bytes.len()
        ));
    };
    let mut le = [0_u8; 8];
    le.copy_from_slice(len);
    let n = u64::from_le_bytes(le);
    let rest = (bytes.len() - 8) as u64;
    if n > rest {
        let text = bytes.iter().take(64).all(|b| b.is_ascii());
        return Err(format!(
            "not a safetensors file: its first 8 bytes give a header length of {n} bytes but only {rest} follow{}",
            if text {
                " (it starts like a text file)"
            } else {
                ""
            }
        ));
    }
    match bytes.get(8) {
        Some(b'{') => Ok(()),
        other => Err(format!(
            "not a safetensors file: the header after the 8-byte length must be JSON starting with '{{', found {}",
            other.map_or("nothing".to_string(), |b| format!("byte 0x{b:02x}"))
        )),
    }
}
