// Starts `winlint lsp` for YAML and JSON files: winlint's findings as diagnostics, its fixes as
// quick fixes, a rule's documentation on hover. The server is the winlint binary itself.
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration("winlint");
  const command = config.get<string>("path", "winlint");
  const args = ["lsp", ...config.get<string[]>("args", [])];
  const serverOptions: ServerOptions = { run: { command, args }, debug: { command, args } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "yaml" },
      { scheme: "file", language: "json" },
      { scheme: "untitled", language: "yaml" },
    ],
  };
  client = new LanguageClient("winlint", "winlint", serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (e.affectsConfiguration("winlint") && client) {
        await client.restart();
      }
    }),
  );
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
