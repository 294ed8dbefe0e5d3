//! The SPEC 3.4 `output_type` rule and the tool-name → category table (SPEC 3.4, SPEC 4).
//!
//! Who calls it: the importers (to choose `output_type` as a sender must), the checker (to report
//! a frame whose `output_type` differs) and the detail header (to show which rule decided).
//! Pure functions; no state.

use serde_json::Value;

use super::model::{CatalogTool, Category, OutputType};

/// Which step of the SPEC 3.4 priority order decided an `output_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// 1. The catalog entry declares `output_type`.
    Catalog,
    /// 2. The default for the catalog entry's (or the known tool's) `category`.
    Category,
    /// 3. Neither decided: `text`.
    Fallback,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Catalog => "catalog",
            Self::Category => "category",
            Self::Fallback => "fallback",
        }
    }
}

/// The category of a well-known tool name (Claude Code's tools, SPEC 3 / SPEC 4), or `None`.
/// MCP tools (`mcp__server__tool`) are `mcp`.
pub fn known_category(tool_name: &str) -> Option<Category> {
    let c = match tool_name {
        "Read" | "Write" | "Edit" | "MultiEdit" | "Glob" | "LS" | "NotebookRead"
        | "NotebookEdit" => Category::Filesystem,
        "Bash" | "BashOutput" | "KillBash" | "KillShell" | "TaskOutput" | "TaskStop" => {
            Category::Shell
        }
        "Grep" | "ToolSearch" => Category::Search,
        "WebFetch" | "WebSearch" | "web_search" | "web_fetch" => Category::Web,
        "TodoRead" | "TodoWrite" | "TaskCreate" | "TaskUpdate" | "TaskList" | "TaskGet" => {
            Category::TaskManagement
        }
        "Task" | "Agent" => Category::Agent,
        "EnterPlanMode" | "ExitPlanMode" | "exit_plan_mode" | "AskUserQuestion" => {
            Category::Planning
        }
        n if n.starts_with("mcp__") => Category::Mcp,
        _ => return None,
    };
    Some(c)
}

/// Anthropic's text editor tools (`text_editor_*` types): the client
/// `str_replace_based_edit_tool` (`str_replace_editor` before 2025) and the server
/// `text_editor_code_execution`.
pub fn is_text_editor(tool_name: &str) -> bool {
    matches!(
        tool_name,
        "str_replace_based_edit_tool" | "str_replace_editor" | "text_editor_code_execution"
    )
}

/// The `output_type` a filesystem tool's category default gives (SPEC 3.4 step 2):
/// writes → `diff` when something changed, else `empty`; reads → `file_content`; browsing →
/// `file_list`.
fn filesystem_default(tool_name: &str, output: Option<&Value>) -> OutputType {
    match tool_name {
        "Read" | "NotebookRead" => OutputType::FileContent,
        "Glob" | "LS" => OutputType::FileList,
        // Anthropic's text editor (SPEC 5): one tool that reads (`view`: the file's content,
        // `{file_path, content}` without a Write `type`) and writes (create, str_replace).
        n if is_text_editor(n)
            && output.is_some_and(|v| {
                v.get("content").is_some()
                    && v.get("type").is_none()
                    && v.get("old_string").is_none()
            }) =>
        {
            OutputType::FileContent
        }
        _ => {
            let changed = output.is_some_and(|v| match v {
                Value::Null => false,
                Value::String(s) => !s.is_empty(),
                Value::Array(a) => !a.is_empty(),
                Value::Object(o) => !o.is_empty(),
                Value::Bool(_) | Value::Number(_) => true,
            });
            if changed {
                OutputType::Diff
            } else {
                OutputType::Empty
            }
        }
    }
}

/// The default `output_type` for a category (SPEC 3.4 step 2); `None` when the category has no
/// default (notebook, planning, mcp, custom, unknown).
pub fn category_default(
    category: &Category,
    tool_name: &str,
    output: Option<&Value>,
) -> Option<OutputType> {
    match category {
        Category::Filesystem => Some(filesystem_default(tool_name, output)),
        Category::Shell => Some(OutputType::Text),
        Category::Search => {
            // `text` or `file_list`: a list of paths is a file list.
            let is_list = output
                .is_some_and(|v| v.as_array().is_some_and(|a| a.iter().all(Value::is_string)));
            Some(if is_list {
                OutputType::FileList
            } else {
                OutputType::Text
            })
        }
        Category::Web => Some(OutputType::WebContent),
        Category::TaskManagement => Some(OutputType::Structured),
        Category::Agent => Some(OutputType::AgentResult),
        Category::Notebook => match tool_name {
            "NotebookRead" => Some(OutputType::FileContent),
            _ => None,
        },
        Category::Planning | Category::Mcp | Category::Custom | Category::Unknown(_) => None,
    }
}

/// SPEC 3.4: the `output_type` a sender must choose for a call of `tool_name`, given the tool's
/// current catalog entry (if any) and the output. Returns the type and the rule that decided.
pub fn expected_output_type(
    tool_name: &str,
    entry: Option<&CatalogTool>,
    output: Option<&Value>,
) -> (OutputType, Rule) {
    // A declared value outside the enum is no declaration (its `unknown-enum-value` says so).
    if let Some(ot) = entry.and_then(|e| e.output_type.clone().filter(OutputType::is_known)) {
        return (ot, Rule::Catalog);
    }
    let category = entry
        .and_then(|e| e.category.clone())
        .or_else(|| known_category(tool_name));
    if let Some(ot) = category.and_then(|c| category_default(&c, tool_name, output)) {
        return (ot, Rule::Category);
    }
    (OutputType::Text, Rule::Fallback)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn priority_order() {
        let declared = CatalogTool {
            name: "Bash".into(),
            output_type: Some(OutputType::Structured),
            ..Default::default()
        };
        assert_eq!(
            expected_output_type("Bash", Some(&declared), None),
            (OutputType::Structured, Rule::Catalog)
        );
        assert_eq!(
            expected_output_type("Bash", None, None),
            (OutputType::Text, Rule::Category)
        );
        assert_eq!(
            expected_output_type("Edit", None, Some(&json!("x"))),
            (OutputType::Diff, Rule::Category)
        );
        assert_eq!(
            expected_output_type("Write", None, Some(&json!(""))),
            (OutputType::Empty, Rule::Category)
        );
        assert_eq!(
            expected_output_type("Glob", None, None),
            (OutputType::FileList, Rule::Category)
        );
        assert_eq!(
            expected_output_type("Frobnicate", None, None),
            (OutputType::Text, Rule::Fallback)
        );
        let custom = CatalogTool {
            name: "X".into(),
            category: Some(Category::Web),
            ..Default::default()
        };
        assert_eq!(
            expected_output_type("X", Some(&custom), None),
            (OutputType::WebContent, Rule::Category)
        );
    }
}
