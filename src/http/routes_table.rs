//! Which methods each documented path accepts, read from the OpenAPI
//! document, so a request with the wrong method gets 405 with `Allow`
//! rather than 404.

use std::sync::OnceLock;

struct Template {
    segments: Vec<Option<String>>,
    methods: Vec<&'static str>,
}

fn table() -> &'static [Template] {
    static TABLE: OnceLock<Vec<Template>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let doc = super::openapi::document();
        doc.paths
            .paths
            .iter()
            .map(|(path, item)| {
                let segments = path
                    .split('/')
                    .map(|s| (!s.starts_with('{')).then(|| s.to_owned()))
                    .collect();
                let mut methods = Vec::new();
                for (method, present) in [
                    ("GET", item.get.is_some()),
                    ("POST", item.post.is_some()),
                    ("PUT", item.put.is_some()),
                    ("PATCH", item.patch.is_some()),
                    ("DELETE", item.delete.is_some()),
                ] {
                    if present {
                        methods.push(method);
                    }
                }
                Template { segments, methods }
            })
            .collect()
    })
}

/// The methods allowed on `path`, or `None` when no documented path matches.
pub fn allowed_methods(path: &str) -> Option<Vec<&'static str>> {
    let parts: Vec<&str> = path.split('/').collect();
    let mut allowed: Vec<&'static str> = Vec::new();
    for template in table() {
        let matches = template.segments.len() == parts.len()
            && template
                .segments
                .iter()
                .zip(&parts)
                .all(|(seg, part)| seg.as_deref().map_or(!part.is_empty(), |lit| lit == *part));
        if matches {
            allowed.extend(&template.methods);
        }
    }
    allowed.sort_unstable();
    allowed.dedup();
    (!allowed.is_empty()).then_some(allowed)
}
