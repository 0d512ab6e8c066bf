//! The web tools: `search_web` (SerpAPI) and `fetch_web_page` (a page as text, public
//! addresses only), with the settings they share and the HTML reading behind the fetch.

pub(crate) mod fetch;
pub(crate) mod html_parse;
pub(crate) mod html_text;
pub(crate) mod net_guard;
pub(crate) mod resolver;
pub(crate) mod search;
pub(crate) mod settings;

pub use fetch::FetchTool;
pub use html_parse::ParseLimits;
pub use search::SearchWebTool;
pub use settings::WebSettings;

use super::registry::ToolRegistry;

/// Adds `search_web` and `fetch_web_page`.
pub fn register(registry: &mut ToolRegistry, settings: &WebSettings) {
    registry.register(SearchWebTool::new(settings.clone()));
    registry.register(FetchTool::new(settings.clone()));
}
