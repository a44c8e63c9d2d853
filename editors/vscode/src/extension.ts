// VS Code client of transcript-ls: starts the server on stdio for `.jsonl` transcripts and for the
// rendered views (`transcript:` URIs), and adds the commands, the status bar item and the view
// plumbing that the protocol leaves to clients (server/PROTOCOL.md).
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import * as history from './history';
import * as search from './search';
import * as sessions from './sessions';
import { Unseen } from './unseen';
import {
  DidChangeConfigurationNotification,
  CloseAction,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  Location as LspLocation,
  LocationLink as LspLocationLink,
  ServerOptions,
  State,
} from 'vscode-languageclient/node';

/** Scheme of the rendered views: `transcript:///abs/path/session.jsonl[?verbose=1]`. */
export const VIEW_SCHEME = 'transcript';
/** Language given to view documents (so no JSON tooling runs on them). */
export const VIEW_LANGUAGE = 'transcript-view';
/** Language given to a raw `.jsonl` the server reads as a transcript (issue 23 item 8), so that
 * configuration defaults such as word wrap apply to transcripts only, not to every JSON Lines
 * file (package.json `configurationDefaults["[transcript-jsonl]"]`). */
export const RAW_LANGUAGE = 'transcript-jsonl';
/** Server settings, section `transcript` (PROTOCOL.md, Settings). */
const SERVER_KEYS = ['verbose', 'finalMarker', 'roots', 'workspaceFolders', 'indexCache', 'timeZone', 'gatePhases', 'semanticTokens', 'fileState'] as const;
/** Settings read only when the server starts. */
const RESTART_KEYS = ['transcript-ls.path', 'transcript.semanticTokens'];

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let status: StatusItem | undefined;
/** Content provider used when the server offers only the `transcript/virtualDocument` alias. */
let fallbackViews: FallbackViewProvider | undefined;
let sessionTree: sessions.SessionTree | undefined;
let extensionPath = '';

export async function activate(ctx: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('Transcript LS', { log: true });
  ctx.subscriptions.push(output);
  extensionPath = ctx.extensionPath;

  const command = (id: string, fn: (...args: any[]) => unknown) =>
    ctx.subscriptions.push(vscode.commands.registerCommand(id, fn));
  command('transcript-ls.openView', (uri?: vscode.Uri) => openView(uri, undefined));
  command('transcript-ls.openViewVerbose', (uri?: vscode.Uri) => openView(uri, true));
  command('transcript-ls.openPreview', (uri?: vscode.Uri) => openPreview(uri));
  command('transcript-ls.nextTurn', () => jump('transcript.nextTurn', 'next turn'));
  command('transcript-ls.previousTurn', () => jump('transcript.previousTurn', 'previous turn'));
  command('transcript-ls.nextGate', () => jump('transcript.nextGate', 'next gate'));
  command('transcript-ls.showSubagents', (uri?: vscode.Uri) => showSessionFiles(uri));
  command('transcript-ls.restartServer', () => restart());
  command('transcript-ls.openRaw', (uri?: vscode.Uri) => openRaw(uri));
  command('transcript-ls.showDiff', () => showDiffAtCursor());
  command('transcript-ls.showTurnChanges', () => showChangesAtCursor(false));
  command('transcript-ls.showSessionChanges', () => showChangesAtCursor(true));
  const seen = new Unseen(ctx.globalState, VIEW_SCHEME, fileOfView);
  ctx.subscriptions.push(seen);
  command('transcript-ls.jumpToNew', () => seen.jumpToNew());
  command('transcript-ls.jumpToNewestTurn', () => seen.jumpToNewestTurn());
  sessionTree = sessions.register(ctx, {
    client: () => client,
    openView: (uri, title, column) => openView(uri, undefined, title, column),
    log: (msg) => output.appendLine(msg),
    isUnseen: (s) => seen.isUnseen(s),
    noteList: (list, complete) => seen.noteList(list, complete),
  });
  ctx.subscriptions.push(seen.onDidChangeSeen(() => sessionTree?.redraw()));

  search.register(ctx, {
    client: () => (client?.state === State.Running ? client : undefined),
    openView: (uri, verbose, title) => openView(uri, verbose, title),
    log: (msg) => output.appendLine(msg),
  });

  history.register(ctx, {
    client: () => (client?.state === State.Running ? client : undefined),
    openView: (uri, title, column) => openView(uri, undefined, title, column),
    ensureViewProvider,
    log: (msg) => output.appendLine(msg),
  });

  // A reading view of a live session folds the work runs that arrive later too (issue 23 item 5).
  ctx.subscriptions.push(
    vscode.workspace.onDidChangeTextDocument((e) => readingGrew(e.document)),
    vscode.window.onDidChangeActiveTextEditor((ed) => ed && readingGrew(ed.document)),
    vscode.workspace.onDidCloseTextDocument((d) => readingFolded.delete(d.uri.toString())),
  );
  // Views get their own language (their URI ends in `.jsonl`, which would make them JSON Lines).
  ctx.subscriptions.push(vscode.workspace.onDidOpenTextDocument(setViewLanguage));
  vscode.workspace.textDocuments.forEach(setViewLanguage);
  // Raw transcripts get their own language once the server says they are transcripts.
  ctx.subscriptions.push(vscode.workspace.onDidOpenTextDocument((d) => void setRawLanguage(d)));

  ctx.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (e) => {
      if (RESTART_KEYS.some((k) => e.affectsConfiguration(k))) {
        await restart();
      } else if ((e.affectsConfiguration('transcript') || e.affectsConfiguration('transcript-ls.viewMode')) && client?.state === State.Running) {
        await client.sendNotification(DidChangeConfigurationNotification.type, {
          settings: { transcript: serverSettings() },
        });
      }
      if (e.affectsConfiguration('transcript-ls.statusBar')) {
        status?.update();
      }
    }),
  );

  status = new StatusItem();
  ctx.subscriptions.push(status);

  await start();
}

export async function deactivate(): Promise<void> {
  if (client) {
    const c = client;
    client = undefined;
    await c.stop();
  }
}

/** The server settings from the `transcript.*` configuration; unset values are `null`. */
export function serverSettings(): Record<string, unknown> {
  const cfg = vscode.workspace.getConfiguration('transcript');
  const out: Record<string, unknown> = {};
  for (const k of SERVER_KEYS) {
    const v = cfg.get(k);
    out[k] = v === undefined || v === '' ? null : v;
  }
  // The server renders the quiet or the verbose view; `reading` is the verbose one, folded here.
  out.verbose = viewMode() !== 'quiet';
  return out;
}

/** The shape a view opens in (`transcript-ls.viewMode`, issue 23 item 5): `reading` (default: the
 * verbose view with its work runs and thoughts folded), `quiet` or `verbose`. The deprecated
 * `transcript.verbose`, when set and `viewMode` is not, means `verbose` (true) or `quiet`. */
export function viewMode(): 'reading' | 'quiet' | 'verbose' {
  const client = vscode.workspace.getConfiguration('transcript-ls');
  const mode = client.inspect<string>('viewMode');
  const set = mode?.workspaceFolderValue ?? mode?.workspaceValue ?? mode?.globalValue;
  if (set === undefined) {
    const old = vscode.workspace.getConfiguration('transcript').inspect<boolean>('verbose');
    const v = old?.workspaceFolderValue ?? old?.workspaceValue ?? old?.globalValue;
    if (typeof v === 'boolean') {
      return v ? 'verbose' : 'quiet';
    }
  }
  const m = client.get<string>('viewMode');
  return m === 'quiet' || m === 'verbose' ? m : 'reading';
}

/** Where the server binary is looked for when `transcript-ls.path` is empty: inside the
 * extension (a platform-specific .vsix ships it in `server/`), then `PATH`, `~/.cargo/bin`
 * (`cargo install`), `~/.local/bin`. */
export function serverCandidates(): string[] {
  const exe = process.platform === 'win32' ? 'transcript-ls.exe' : 'transcript-ls';
  const out: string[] = [];
  if (extensionPath) {
    const bundled = path.join(extensionPath, 'server', exe);
    // An installer that dropped the mode bits leaves the bundled server unexecutable.
    if (process.platform !== 'win32' && fs.existsSync(bundled) && !executable(bundled)) {
      try {
        fs.chmodSync(bundled, 0o755);
      } catch {
        // (a read-only extension folder: the next candidates are tried)
      }
    }
    out.push(bundled);
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir) {
      out.push(path.join(dir, exe));
    }
  }
  out.push(path.join(os.homedir(), '.cargo', 'bin', exe), path.join(os.homedir(), '.local', 'bin', exe));
  return out;
}

function executable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The server binary: `transcript-ls.path` (with `~` expanded) when set, else the first
 * executable of [`serverCandidates`]. `error` says why there is none: a set path that is not an
 * executable file, or no candidate found. */
function serverPath(): { command?: string; error?: string } {
  const p = vscode.workspace.getConfiguration('transcript-ls').get<string | null>('path');
  if (p) {
    const command = p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p;
    if (!executable(command)) {
      return {
        error:
          `Transcript LS: the server path \`${command}\` (setting transcript-ls.path) is not an executable file. ` +
          'Set the path of `transcript-ls`, or clear the setting to use the server found in PATH, ~/.cargo/bin or ~/.local/bin.',
      };
    }
    return { command };
  }
  const command = serverCandidates().find(executable);
  if (!command) {
    return {
      error:
        'Transcript LS: the server `transcript-ls` was not found (looked in the extension, PATH, ~/.cargo/bin, ~/.local/bin). ' +
        'Install it with `cargo install --path server` from the transcript-ls repository, or set its path.',
    };
  }
  return { command };
}

/** One error for a missing or broken server, with a button to set its path. */
async function serverError(msg: string): Promise<void> {
  output.appendLine(msg);
  const pick = await vscode.window.showErrorMessage(msg, 'Set path', 'Show log');
  if (pick === 'Set path') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'transcript-ls.path');
  } else if (pick === 'Show log') {
    output.show();
  }
}

async function start(): Promise<void> {
  const { command, error } = serverPath();
  if (!command) {
    void serverError(error ?? 'Transcript LS: no server');
    return;
  }
  output.appendLine(`server: ${command}`);
  const serverOptions: ServerOptions = { command, args: [] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'jsonl' },
      { scheme: 'file', language: RAW_LANGUAGE },
      { scheme: 'file', pattern: '**/*.jsonl' },
      // Views only once they have their language: one side of a file edit's diff
      // (`?call=…&side=…`) is a `transcript:` document too, with text only.
      { scheme: VIEW_SCHEME, language: VIEW_LANGUAGE },
    ],
    initializationOptions: serverSettings(),
    outputChannel: output,
    // One clear error (in `start` below) instead of languageclient's own toasts.
    initializationFailedHandler: () => false,
    errorHandler: {
      error: () => ({ action: ErrorAction.Shutdown, handled: true }),
      closed: () => ({ action: CloseAction.DoNotRestart, handled: true }),
    },
    middleware: {
      // The view's turn hints wrap (word wrap is on in views) between figures, never inside
      // one: `2 comments` and `turn 1/10` stay whole (`/` is no break point in views, see
      // package.json).
      provideInlayHints: async (doc, range, token, next) => {
        const hints = await next(doc, range, token);
        if (hints && doc.uri.scheme === VIEW_SCHEME) {
          for (const h of hints) {
            if (typeof h.label === 'string') {
              h.label = unbreakableFigures(h.label);
            }
          }
        }
        return hints;
      },
      // In a view the answers are markdown, coloured by the view's grammar (issue 23 item 6):
      // the plain final-answer token, which would paint each answer as one bold run over it,
      // is left out there (raw files keep it; an answer in flight or cut short keeps its token,
      // whose modifiers say so).
      provideDocumentSemanticTokens: async (doc, token, next) => markdownAnswers(doc, await next(doc, token)),
      provideDocumentSemanticTokensEdits: async (doc, previousResultId, token, next) => {
        if (!isView(doc.uri)) {
          return next(doc, previousResultId, token);
        }
        // (edits would apply to the tokens the server sent, not to the filtered ones)
        const c = client;
        if (!c) {
          return undefined;
        }
        const full = await c.sendRequest<any>('textDocument/semanticTokens/full', { textDocument: { uri: c.code2ProtocolConverter.asUri(doc.uri) } }, token);
        return markdownAnswers(doc, full ? await c.protocol2CodeConverter.asSemanticTokens(full) : undefined);
      },
      provideDocumentRangeSemanticTokens: async (doc, range, token, next) => markdownAnswers(doc, await next(doc, range, token)),
      // A folded turn of a view shows its prompt (issue 23 item 4): VS Code shows a folded
      // range's first line only (it ignores `collapsedText`), and a view's turn range starts
      // at its `## Turn N` heading; start it at the prompt's first line instead (the heading
      // and the blank line under it stay visible above it).
      provideFoldingRanges: async (doc, context, token, next) => {
        const ranges = await next(doc, context, token);
        if (ranges && doc.uri.scheme === VIEW_SCHEME) {
          for (const r of ranges) {
            if (/^## Turn \d+/.test(doc.lineAt(r.start).text)) {
              for (let k = r.start + 1; k <= Math.min(r.start + 3, r.end - 1, doc.lineCount - 1); k++) {
                if (doc.lineAt(k).text.startsWith('> ')) {
                  r.start = k;
                  break;
                }
              }
            }
          }
        }
        return ranges;
      },
      // Commands carried by code lenses (gate stepper -> next gate, sub-agent -> open it) run on
      // the server; show what they return.
      executeCommand: async (command, args, next) => {
        const result = await next(command, args);
        if (command === 'transcript.listSessionFiles') {
          await pickSessionFile(result);
        } else if (command === 'transcript.showDiff') {
          await showDiff(result);
        } else if (command === 'transcript.showChanges') {
          await showChanges(result);
        } else if (!(args?.[0] && typeof args[0] === 'object' && args[0].reveal === true)) {
          // with `reveal: true` the server moves there itself (window/showDocument)
          await showResult(result, command);
        }
        return result;
      },
    },
  };
  const c = new LanguageClient('transcript-ls', 'Transcript LS', serverOptions, clientOptions);
  client = c;
  // languageclient answers `workspace/textDocumentContent/refresh` for its own provider; the
  // server's notification matters only to the fallback provider.
  c.onNotification('transcript/didChangeVirtualDocument', (params: { uri?: string }) => {
    if (params?.uri) {
      fallbackViews?.emitter.fire(vscode.Uri.parse(params.uri));
    }
  });
  // The session index changed for these transcripts (PROTOCOL.md): the tree's live dots,
  // titles and turns follow at once, in step with the views (issue 23 item 9: the tree kept its
  // live dot after the view showed the turn finished), and open views take the new title.
  c.onNotification('transcript/didChangeSessions', (params: { uris?: string[] }) => {
    const files = new Set((params?.uris ?? []).map((u) => vscode.Uri.parse(u).fsPath));
    sessionsChanged(files);
  });
  try {
    await c.start();
  } catch (e) {
    client = undefined;
    void serverError(`Transcript LS: cannot start the server \`${command}\`: ${e instanceof Error ? e.message : e}`);
    return;
  }
  status?.update();
  vscode.workspace.textDocuments.forEach((d) => void setRawLanguage(d));
  if (sessionTree) {
    void sessionTree.refresh();
    sessions.recheckActive(sessionTree);
  }
}

async function restart(): Promise<void> {
  if (client) {
    const c = client;
    client = undefined;
    try {
      await c.stop();
    } catch (e) {
      output.appendLine(`stopping the server: ${e}`);
    }
  }
  await start();
}

function running(): LanguageClient | undefined {
  if (!client || client.state !== State.Running) {
    void vscode.window.showWarningMessage('Transcript LS: the server is not running.');
    return undefined;
  }
  return client;
}

// ---- views ---------------------------------------------------------------------------------

/** `turn 1/10 · 2 comments` -> the same with no-break spaces inside each ` · `-separated
 * figure, so a wrapped hint breaks only between figures. */
export function unbreakableFigures(label: string): string {
  return label
    .split(' · ')
    .map((part) => part.replace(/ /g, '\u00a0'))
    .join(' · ');
}

/** A view (not one side of a diff). */
function isView(uri: vscode.Uri): boolean {
  return uri.scheme === VIEW_SCHEME && !isDiffSide(uri);
}

/** `tokens` of `doc` without the plain `finalAnswer` tokens when `doc` is a view and the legend
 * is the custom one (issue 23 item 6). */
function markdownAnswers(doc: vscode.TextDocument, tokens: vscode.SemanticTokens | null | undefined): vscode.SemanticTokens | undefined {
  if (!tokens || !isView(doc.uri)) {
    return tokens ?? undefined;
  }
  const types: string[] = (client?.initializeResult?.capabilities as any)?.semanticTokensProvider?.legend?.tokenTypes ?? [];
  const answer = types.indexOf('finalAnswer');
  return answer < 0 ? tokens : new vscode.SemanticTokens(dropPlainTokens(tokens.data, answer), tokens.resultId);
}

/** Semantic token data (LSP relative encoding: delta line, delta start, length, type, modifier
 * bits per token) without the tokens of type `type` that have no modifier, the next token's
 * deltas made relative to the token before the dropped ones. */
export function dropPlainTokens(data: Uint32Array | number[], type: number): Uint32Array {
  const out: number[] = [];
  let line = 0;
  let start = 0;
  let lastLine = 0;
  let lastStart = 0;
  for (let i = 0; i + 4 < data.length; i += 5) {
    line += data[i];
    start = data[i] === 0 ? start + data[i + 1] : data[i + 1];
    if (data[i + 3] === type && data[i + 4] === 0) {
      continue;
    }
    out.push(line - lastLine, line === lastLine ? start - lastStart : start, data[i + 2], data[i + 3], data[i + 4]);
    lastLine = line;
    lastStart = start;
  }
  return new Uint32Array(out);
}

/** One side of a file edit's diff (`transcript:/<file>?call=…&side=before|after&path=…`):
 * text only, its language from the edited file's name. */
export function isDiffSide(uri: vscode.Uri): boolean {
  if (uri.scheme !== VIEW_SCHEME) {
    return false;
  }
  const q = new URLSearchParams(uri.query);
  return q.has('call') || q.has('change');
}

async function setViewLanguage(doc: vscode.TextDocument): Promise<void> {
  if (doc.uri.scheme === VIEW_SCHEME && doc.languageId !== VIEW_LANGUAGE && !isDiffSide(doc.uri)) {
    await vscode.languages.setTextDocumentLanguage(doc, VIEW_LANGUAGE);
  }
}

/** A raw `.jsonl` (language `jsonl`) that the server reads as a transcript takes the language
 * `transcript-jsonl` (issue 23 item 8): its configuration defaults wrap the long JSON lines, so
 * the answer's text and the hints at the line start stay in sight, while any other JSON Lines
 * file keeps VS Code's defaults. Asked once the server has the document (it is one of the
 * client's documents through the `**∕*.jsonl` selector); a file the server cannot read as a
 * transcript is left alone. */
async function setRawLanguage(doc: vscode.TextDocument): Promise<void> {
  if (doc.uri.scheme !== 'file' || doc.languageId !== 'jsonl' || !doc.uri.path.endsWith('.jsonl')) {
    return;
  }
  const c = client;
  if (!c || c.state !== State.Running) {
    return; // asked again when the server has started
  }
  // (the client's own didOpen goes out first)
  await new Promise((r) => setTimeout(r, 50));
  try {
    if (doc.isClosed || doc.languageId !== 'jsonl' || !(await sessions.isTranscript(c, doc.uri))) {
      return;
    }
    await vscode.languages.setTextDocumentLanguage(doc, RAW_LANGUAGE);
  } catch (e) {
    output.appendLine(`transcript language for ${doc.uri.fsPath}: ${e instanceof Error ? e.message : e}`);
  }
}

/** The providers languageclient registered for `workspace/textDocumentContent`, if any. */
function standardViewProviders(): { scheme: string; onDidChangeEmitter: vscode.EventEmitter<vscode.Uri> }[] {
  const feature = client?.getFeature('workspace/textDocumentContent' as any) as any;
  const providers = feature?.getProviders?.() ?? [];
  return providers.filter((p: any) => p.scheme === VIEW_SCHEME);
}

/** Serves views through the alias request when the server registered no standard provider. */
class FallbackViewProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(VIEW_SCHEME, this);

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const c = client;
    if (!c) {
      throw new Error('the transcript-ls server is not running');
    }
    const res = await c.sendRequest<{ text: string }>('transcript/virtualDocument', { uri: uri.toString() }, token);
    return res.text;
  }

  dispose(): void {
    this.registration.dispose();
    this.emitter.dispose();
  }
}

function ensureViewProvider(): void {
  if (standardViewProviders().length === 0 && !fallbackViews) {
    output.appendLine('the server registered no workspace/textDocumentContent provider: using transcript/virtualDocument');
    fallbackViews = new FallbackViewProvider();
  }
}

/** The resource of the active tab: an editor's document, or a tab whose file VS Code did not
 * sync to extensions (over 50 MB), which has no `TextEditor`. */
function activeResource(): vscode.Uri | undefined {
  const ed = vscode.window.activeTextEditor;
  if (ed) {
    return ed.document.uri;
  }
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  return input instanceof vscode.TabInputText ? input.uri : undefined;
}

/** The file behind a view URI (`transcript:///abs/file.jsonl` or the titled form
 * `transcript:/<title>?path=/abs/file.jsonl`), or the URI itself when it is a file. */
export function fileOfView(uri: vscode.Uri): vscode.Uri {
  if (uri.scheme !== VIEW_SCHEME) {
    return uri;
  }
  const p = new URLSearchParams(uri.query).get('path');
  return p ? vscode.Uri.file(p) : uri.with({ scheme: 'file', query: '', fragment: '' });
}

/** The view URI of a transcript (file or view) URI. With a title, the titled form whose last
 * path segment names the editor tab (PROTOCOL.md: `transcript:/<title>?[verbose=1&]path=<file>`,
 * `path` last).
 *
 * A `/` in the title is written as U+2215 DIVISION SLASH `∕` and a `\` as U+29F5 REVERSE
 * SOLIDUS OPERATOR `⧵`, which look the same (issue 23 item 9: a `\` showed as `∕`):
 * VS Code names a text editor's tab after the last segment of its URI's decoded path, so
 * neither `/` nor `%2F` can appear in it; no extension API sets a text editor's tab label (only
 * webview and custom editors have their own title), and a `resourceLabelFormatters`
 * contribution turns every `/` of its label into its separator before taking the last
 * segment (checked in Code 1.139). The tree, the quick pick and the view's heading show the
 * title as written. */
export function viewUri(uri: vscode.Uri, verbose: boolean | undefined, title?: string): vscode.Uri {
  const file = fileOfView(uri);
  const v = verbose === undefined ? '' : verbose ? 'verbose=1' : 'verbose=0';
  if (title) {
    const base = title.replace(/\//g, '∕').replace(/\\/g, '⧵').replace(/\s+/g, ' ').trim().slice(0, 60) || path.basename(file.fsPath);
    // The verbose view's tab says so, beside the quiet view's (issue 23 item 9).
    const name = verbose ? `${base} (verbose)` : base;
    return vscode.Uri.from({ scheme: VIEW_SCHEME, path: '/' + name, query: [v, `path=${file.fsPath}`].filter((q) => q).join('&') });
  }
  return file.with({ scheme: VIEW_SCHEME, query: v, fragment: '' });
}

/** Files named by `transcript/didChangeSessions` not yet acted on, and the timer that acts. */
const changedSessions = new Set<string>();
let sessionsTimer: NodeJS.Timeout | undefined;

/** After `transcript/didChangeSessions` (a few at once become one): the session tree reloads,
 * then every open view of a changed session whose tab title is not the session's title any
 * more is opened again under the new title (issue 23 item 9). */
function sessionsChanged(files: Set<string>): void {
  files.forEach((f) => changedSessions.add(f));
  if (sessionsTimer) {
    return;
  }
  sessionsTimer = setTimeout(() => {
    sessionsTimer = undefined;
    const changed = new Set(changedSessions);
    changedSessions.clear();
    void (async () => {
      await sessionTree?.refresh();
      await retitleViews(changed);
    })();
  }, 100);
}

/** Opens again, under its session's current title, each open view tab of `files` whose title
 * is out of date: VS Code names a tab after its URI, and the URI holds the title
 * ([`viewUri`]). The new tab takes the old one's place (same group, cursor and scroll) and the
 * old one is closed. */
async function retitleViews(files: Set<string>): Promise<void> {
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      const uri = tab.input instanceof vscode.TabInputText ? tab.input.uri : undefined;
      const old = uri ? titleOfView(uri) : undefined;
      // (one side of a diff names its transcript too, but is no view: left as it is)
      if (!uri || old === undefined || isDiffSide(uri) || !files.has(fileOfView(uri).fsPath)) {
        continue;
      }
      const title = sessionTree?.all().find((x) => vscode.Uri.parse(x.uri).fsPath === fileOfView(uri).fsPath)?.title;
      if (!title) {
        continue;
      }
      const q = new URLSearchParams(uri.query).get('verbose');
      const verbose = q === null ? undefined : q === '1' || q === 'true';
      const next = viewUri(uri, verbose, title);
      if (next.toString() === uri.toString()) {
        continue;
      }
      const editor = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === uri.toString());
      const selection = editor?.selection;
      const top = editor?.visibleRanges[0];
      ensureViewProvider();
      const doc = await vscode.workspace.openTextDocument(next);
      const shown = doc.languageId === VIEW_LANGUAGE ? doc : await vscode.languages.setTextDocumentLanguage(doc, VIEW_LANGUAGE);
      const ed = await vscode.window.showTextDocument(shown, { preview: false, viewColumn: group.viewColumn, preserveFocus: !tab.isActive || !group.isActive, selection });
      if (top) {
        ed.revealRange(top, vscode.TextEditorRevealType.AtTop);
      }
      await vscode.window.tabGroups.close(tab, true);
    }
  }
}

/** The title of a view URI in the titled form, if it is one. */
function titleOfView(uri: vscode.Uri): string | undefined {
  return uri.scheme === VIEW_SCHEME && new URLSearchParams(uri.query).get('path') ? path.posix.basename(uri.path) : undefined;
}

/** Opens the rendered view of a transcript. Works from the explorer for files too large for
 * VS Code to sync (the server reads the file by its path). In a view, toggles between the quiet
 * view and the shape of `transcript-ls.viewMode` (a verbose view goes to the quiet one). The tab
 * is titled by the session title when it is known. With `viewMode` `reading` a view opened
 * without an explicit `verbose` is the verbose one (the server's `verbose` setting) with its
 * work runs and thoughts folded ([`foldWorkRuns`]). */
async function openView(arg: vscode.Uri | undefined, verbose: boolean | undefined, title?: string, column?: vscode.ViewColumn): Promise<void> {
  const uri = arg instanceof vscode.Uri ? arg : activeResource();
  if (!uri) {
    void vscode.window.showInformationMessage('Transcript LS: open a transcript (.jsonl) first.');
    return;
  }
  if (!running()) {
    return;
  }
  const mode = viewMode();
  if (uri.scheme === VIEW_SCHEME && verbose === undefined) {
    const q = new URLSearchParams(uri.query).get('verbose');
    const was = q === null ? mode !== 'quiet' : q === '1' || q === 'true';
    // quiet -> the mode's own shape (the plain URI when that is the server's default)
    verbose = was ? false : mode === 'quiet' ? true : undefined;
  }
  title = title ?? titleOfView(uri) ?? (await sessionTree?.titleOf(fileOfView(uri)));
  ensureViewProvider();
  const doc = await vscode.workspace.openTextDocument(viewUri(uri, verbose, title));
  const shown = doc.languageId === VIEW_LANGUAGE ? doc : await vscode.languages.setTextDocumentLanguage(doc, VIEW_LANGUAGE);
  const ed = await vscode.window.showTextDocument(shown, { preview: false, viewColumn: column });
  if (mode === 'reading' && verbose === undefined) {
    await foldWorkRuns(ed);
  }
}

/** The reading shape of a verbose view (issue 23 item 5): every range three levels deep (a
 * turn's work runs and thoughts, inside the turn and its activity) folded, so the view reads as
 * prompts, the agent's comments, one `▸ Worked · 3 tool calls` line per work run and the
 * answers; Neovim's `foldlevel` 2. Waits up to 5 s for the view's folding ranges (the server
 * has just been given the document). */
async function foldWorkRuns(ed: vscode.TextEditor): Promise<void> {
  const uri = ed.document.uri;
  let ranges: vscode.FoldingRange[] = [];
  for (let i = 0; i < 50 && ranges.length === 0; i++) {
    ranges = (await vscode.commands.executeCommand<vscode.FoldingRange[]>('vscode.executeFoldingRangeProvider', uri)) ?? [];
    if (ranges.length === 0) {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const lines = readingFoldLines(ranges);
  readingFolded.set(uri.toString(), Math.max(-1, ...lines));
  if (lines.length === 0 || vscode.window.activeTextEditor?.document.uri.toString() !== uri.toString()) {
    return;
  }
  await vscode.commands.executeCommand('editor.fold', { levels: 1, direction: 'down', selectionLines: lines });
}

/** Per reading view (URI): the start line of the last work run or thought it folded, or -1.
 * Only the ranges past it are folded when the view grows, so a run the user opened by hand
 * stays open (a live view grows at its end). */
const readingFolded = new Map<string, number>();
const readingTimers = new Map<string, NodeJS.Timeout>();

/** A reading view changed (a live session's view, refreshed) or was shown again: its new work
 * runs and thoughts are folded once the server's folding ranges have them (issue 23 item 5:
 * only the view's first rendering was folded). Waits for the view to be the active editor
 * (`editor.fold` folds in the active one). */
function readingGrew(doc: vscode.TextDocument): void {
  const key = doc.uri.toString();
  if (!readingFolded.has(key) || readingTimers.has(key)) {
    return;
  }
  readingTimers.set(
    key,
    setTimeout(async () => {
      readingTimers.delete(key);
      for (let i = 0; i < 20; i++) {
        const ed = vscode.window.activeTextEditor;
        if (ed?.document.uri.toString() !== key) {
          return; // (again when it is shown)
        }
        const done = readingFolded.get(key) ?? -1;
        const ranges = (await vscode.commands.executeCommand<vscode.FoldingRange[]>('vscode.executeFoldingRangeProvider', doc.uri)) ?? [];
        const fresh = readingFoldLines(ranges).filter((l) => l > done && l < doc.lineCount);
        if (fresh.length > 0) {
          readingFolded.set(key, Math.max(...fresh));
          await vscode.commands.executeCommand('editor.fold', { levels: 1, direction: 'down', selectionLines: fresh });
          return;
        }
        await new Promise((r) => setTimeout(r, 150));
      }
    }, 300),
  );
}

/** The start lines (0-based) of the ranges nested exactly three deep, the ranges a reading view
 * folds (deeper ones are inside them). Ranges may come in any order. */
export function readingFoldLines(ranges: { start: number; end: number }[]): number[] {
  const sorted = [...ranges].sort((a, b) => a.start - b.start || b.end - a.end);
  const open: { start: number; end: number }[] = [];
  const out: number[] = [];
  for (const r of sorted) {
    while (open.length > 0 && open[open.length - 1].end < r.start) {
      open.pop();
    }
    if (open.length === 2) {
      out.push(r.start);
    }
    open.push(r);
  }
  return out;
}

/** "Transcript: Open Preview" (issue 23 item 6): the view in VS Code's Markdown preview, beside
 * it, where the answers' markdown (lists, code fences, tables, links) is rendered, with the
 * images of prompts and tool results ([`markdownForm`]). From a raw
 * transcript, the preview of its view in the shape of `transcript-ls.viewMode`. The preview follows
 * the view as it changes (a live session). */
async function openPreview(arg?: vscode.Uri): Promise<void> {
  const uri = arg instanceof vscode.Uri ? arg : activeResource();
  if (!uri || (uri.scheme !== VIEW_SCHEME && !uri.path.endsWith('.jsonl'))) {
    void vscode.window.showInformationMessage('Transcript LS: open a transcript (.jsonl) or its view first.');
    return;
  }
  if (!running()) {
    return;
  }
  ensureViewProvider();
  const view = uri.scheme === VIEW_SCHEME ? uri : viewUri(uri, viewMode() === 'quiet' ? undefined : true, await sessionTree?.titleOf(uri));
  const md = markdownForm(view);
  await vscode.workspace.openTextDocument(md);
  await vscode.commands.executeCommand('markdown.showPreviewToSide', md);
}

/** The Markdown form of a view URI (`markdown=1` first in its query, `path=` stays last;
 * PROTOCOL.md "Views"): the same lines, with the images of prompts and tool results as
 * `data:` images and each activity line on its own line (issue 23 item 6). Only the preview
 * reads it; the view a user reads as text never holds base64. */
export function markdownForm(view: vscode.Uri): vscode.Uri {
  if (new URLSearchParams(view.query).get('markdown') === '1') {
    return view;
  }
  return view.with({ query: view.query ? `markdown=1&${view.query}` : 'markdown=1' });
}

/** Opens VS Code's diff editor on the two sides `transcript.showDiff` returned
 * (server/PROTOCOL.md, "Native diffs"); both are served like views. */
async function showDiff(result: any): Promise<void> {
  const c = client;
  if (!c) {
    return;
  }
  if (!result || typeof result.before !== 'string' || typeof result.after !== 'string') {
    vscode.window.setStatusBarMessage('Transcript: no file edit on this line', 3000);
    return;
  }
  ensureViewProvider();
  const before = c.protocol2CodeConverter.asUri(result.before);
  const after = c.protocol2CodeConverter.asUri(result.after);
  await vscode.commands.executeCommand('vscode.diff', before, after, String(result.title ?? 'Show diff'), { preview: false });
}

/** One file of a `transcript.showChanges` reply (server/PROTOCOL.md, "Change sets"). */
interface ChangedFile {
  path: string;
  relativePath?: string;
  label?: string;
  before: string;
  after: string;
}

/** Opens a change set (`transcript.showChanges`'s reply: `{ title, files }`) in VS Code's
 * multi-file diff editor (`vscode.changes`), titled by the turn; each file's two sides are
 * `transcript:` URIs served like views. Where the command is missing (VS Code before 1.86)
 * one file opens in the diff editor and several in a quick pick of them. */
async function showChanges(result: any): Promise<void> {
  const c = client;
  if (!c) {
    return;
  }
  const files: ChangedFile[] = Array.isArray(result?.files) ? result.files : [];
  if (files.length === 0) {
    vscode.window.setStatusBarMessage('Transcript: no file changed here', 3000);
    return;
  }
  ensureViewProvider();
  const title = String(result.title ?? 'Changes');
  const side = (u: string) => c.protocol2CodeConverter.asUri(u);
  const resources = files.map((f) => [vscode.Uri.file(f.path), side(f.before), side(f.after)]);
  try {
    await vscode.commands.executeCommand('vscode.changes', title, resources);
    return;
  } catch (e) {
    output.appendLine(`vscode.changes failed (${e instanceof Error ? e.message : e}); falling back to vscode.diff`);
  }
  let pick: ChangedFile | undefined = files[0];
  if (files.length > 1) {
    const items = files.map((f) => ({ label: f.label ?? f.path, description: f.path, file: f }));
    pick = (await vscode.window.showQuickPick(items, { title, placeHolder: 'File to show in the diff editor' }))?.file;
  }
  if (pick) {
    const label = `${pick.relativePath ?? pick.path} · ${title}`;
    await vscode.commands.executeCommand('vscode.diff', side(pick.before), side(pick.after), label, { preview: false });
  }
}

/** Show Changes from the palette: the turn shown on the cursor's line, or the whole session. */
async function showChangesAtCursor(session: boolean): Promise<void> {
  const c = running();
  const ed = vscode.window.activeTextEditor;
  if (!c || !ed) {
    return;
  }
  const uri = c.code2ProtocolConverter.asUri(ed.document.uri);
  const args = [session ? { uri, session: true } : { uri, line: ed.selection.active.line }];
  try {
    const result = await c.sendRequest(ExecuteCommandRequest.type, { command: 'transcript.showChanges', arguments: args });
    await showChanges(result);
  } catch (e) {
    void vscode.window.showErrorMessage(`Transcript: cannot show the changes: ${e instanceof Error ? e.message : e}`);
  }
}

/** Show diff from the palette: the file edit on the cursor's line. */
async function showDiffAtCursor(): Promise<void> {
  const c = running();
  const ed = vscode.window.activeTextEditor;
  if (!c || !ed) {
    return;
  }
  const args = [{ uri: c.code2ProtocolConverter.asUri(ed.document.uri), line: ed.selection.active.line }];
  const result = await c.sendRequest(ExecuteCommandRequest.type, { command: 'transcript.showDiff', arguments: args });
  await showDiff(result);
}

/** Opens the raw JSONL behind a view (or the given file) as text. */
async function openRaw(arg?: vscode.Uri): Promise<void> {
  const uri = arg instanceof vscode.Uri ? arg : activeResource();
  if (!uri) {
    return;
  }
  const file = fileOfView(uri);
  sessions.rawRequested.add(file.toString());
  await vscode.window.showTextDocument(file, { preview: false });
}

// ---- navigation ----------------------------------------------------------------------------

/** Runs a position command (`transcript.nextTurn` …) at the cursor and goes where it says. */
async function jump(command: string, what: string): Promise<void> {
  const c = running();
  const ed = vscode.window.activeTextEditor;
  if (!c || !ed) {
    return;
  }
  const position = c.code2ProtocolConverter.asPosition(ed.selection.active);
  const args = [{ uri: c.code2ProtocolConverter.asUri(ed.document.uri), line: position.line, position }];
  const result = await c.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  await showResult(result, what);
}

/** Shows a command result: a Location/LocationLink is revealed, a URI is opened. */
async function showResult(result: unknown, what: string): Promise<void> {
  const c = client;
  if (!c) {
    return;
  }
  let r: any = Array.isArray(result) ? result[0] : result;
  if (r === null || r === undefined) {
    vscode.window.setStatusBarMessage(`Transcript: no ${what}`, 3000);
    return;
  }
  if (typeof r === 'string') {
    r = { uri: r };
  }
  if (LspLocationLink.is(r)) {
    r = { uri: r.targetUri, range: r.targetSelectionRange ?? r.targetRange };
  }
  if (typeof r.uri !== 'string') {
    return; // not something to show (e.g. a list the caller handles)
  }
  const uri = c.protocol2CodeConverter.asUri(r.uri);
  if (uri.scheme === VIEW_SCHEME) {
    ensureViewProvider();
  }
  const range = LspLocation.is(r) ? c.protocol2CodeConverter.asRange(r.range) : undefined;
  const doc = await vscode.workspace.openTextDocument(uri);
  const ed = await vscode.window.showTextDocument(doc, { selection: range ? new vscode.Range(range.start, range.start) : undefined, preview: false });
  if (range) {
    ed.revealRange(range, vscode.TextEditorRevealType.AtTop);
  }
}

// ---- session files -------------------------------------------------------------------------

interface SessionItem extends vscode.QuickPickItem {
  uri: vscode.Uri;
}

/** The reply of `transcript.listSessionFiles` as quick-pick items. */
export function sessionItems(result: any): SessionItem[] {
  const items: SessionItem[] = [];
  const uriOf = (f: any): vscode.Uri | undefined => {
    const u = typeof f === 'string' ? f : f && (f.uri ?? f.path);
    if (typeof u !== 'string') {
      return undefined;
    }
    return u.includes(':') && !u.startsWith('/') ? vscode.Uri.parse(u) : vscode.Uri.file(u);
  };
  const add = (kind: string, f: any) => {
    const uri = uriOf(f);
    if (!uri) {
      return;
    }
    const details: string[] = [];
    if (f && typeof f === 'object') {
      for (const k of ['agentId', 'agentType', 'description', 'label', 'title']) {
        if (typeof f[k] === 'string' && f[k]) {
          details.push(f[k]);
        }
      }
    }
    items.push({ label: `${kind}: ${path.basename(uri.fsPath)}`, description: details.join(' · '), uri });
  };
  if (!result || typeof result !== 'object') {
    return items;
  }
  if (Array.isArray(result)) {
    const names: Record<string, string> = { main: 'main', subagent: 'sub-agent', compaction: 'compaction' };
    result.forEach((f) => add(names[f?.kind] ?? f?.kind ?? 'file', f));
    return items;
  }
  if (result.main) {
    add('main', result.main);
  }
  for (const f of result.subagents ?? []) {
    add(f?.compaction ? 'compaction' : 'sub-agent', f);
  }
  for (const f of result.compaction ?? result.compactions ?? []) {
    add('compaction', f);
  }
  return items;
}

async function pickSessionFile(result: unknown): Promise<void> {
  const items = sessionItems(result);
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Transcript LS: no transcript found for this session.');
    return;
  }
  const pick = await vscode.window.showQuickPick(items, { title: 'Transcripts of this session', matchOnDescription: true });
  if (pick) {
    await vscode.window.showTextDocument(pick.uri, { preview: false });
  }
}

async function showSessionFiles(arg?: vscode.Uri): Promise<void> {
  const c = running();
  const uri = arg instanceof vscode.Uri ? arg : activeResource();
  if (!c || !uri) {
    return;
  }
  const result = await c.sendRequest(ExecuteCommandRequest.type, {
    command: 'transcript.listSessionFiles',
    arguments: [{ uri: c.code2ProtocolConverter.asUri(uri) }],
  });
  await pickSessionFile(result);
}

// ---- status bar ----------------------------------------------------------------------------

/** `$(comment-discussion) 9 turns · 6.7k out` for the active transcript (`transcript/stats`). */
class StatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('transcript-ls.status', vscode.StatusBarAlignment.Left, 50);
  private readonly subs: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;

  constructor() {
    this.item.name = 'Transcript';
    this.item.command = 'transcript-ls.showSubagents';
    this.subs.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.update()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.document === vscode.window.activeTextEditor?.document) {
          this.schedule();
        }
      }),
    );
  }

  schedule(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => this.update(), 500);
  }

  async update(): Promise<void> {
    const seq = ++this.seq;
    const doc = vscode.window.activeTextEditor?.document;
    const enabled = vscode.workspace.getConfiguration('transcript-ls').get<boolean>('statusBar') !== false;
    const c = client;
    if (!enabled || !doc || !c || c.state !== State.Running || !isTranscriptDocument(doc)) {
      this.item.hide();
      return;
    }
    try {
      const text = await statusText(c, doc);
      if (seq !== this.seq) {
        return;
      }
      if (text) {
        this.item.text = text.text;
        this.item.tooltip = text.tooltip;
        this.item.show();
      } else {
        this.item.hide();
      }
    } catch (e) {
      output.appendLine(`status bar: ${e}`);
      this.item.hide();
    }
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.subs.forEach((s) => s.dispose());
    this.item.dispose();
  }
}

function isTranscriptDocument(doc: vscode.TextDocument): boolean {
  return (
    (doc.uri.scheme === VIEW_SCHEME && !isDiffSide(doc.uri)) ||
    (doc.uri.scheme === 'file' && (doc.languageId === 'jsonl' || doc.languageId === RAW_LANGUAGE || doc.uri.path.endsWith('.jsonl')))
  );
}

/** `1234` -> `1.2k`, `2500000` -> `2.5M` (as the view's header writes token counts). */
export function compact(n: number): string {
  if (n < 1000) {
    return String(n);
  }
  if (n < 1_000_000) {
    return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  }
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** The part of `transcript/stats`'s reply the status bar shows (server/PROTOCOL.md). */
export interface TranscriptStats {
  turns: number;
  steps: number;
  tool_calls: number;
  usage: { input: number; output: number; cache_creation: number; cache_read: number; output_placeholder_steps?: number };
  usage_recorded?: boolean;
  turn_list?: { state: string }[];
}

/** Status bar text and tooltip from the exact totals of `transcript/stats`:
 * `$(comment-discussion) 9 turns · 6.7k out` (`· working` while the last turn is in flight). */
export function statusFromStats(st: TranscriptStats): { text: string; tooltip: string } | undefined {
  if (!st || st.turns === 0) {
    return undefined;
  }
  const n = (x: number) => x.toLocaleString('en-US');
  const turns = `${st.turns} turn${st.turns === 1 ? '' : 's'}`;
  const inFlight = st.turn_list?.[st.turn_list.length - 1]?.state === 'in-flight';
  // Responses that logged only a streaming placeholder count: the output is a lower bound.
  const placeholders = st.usage.output_placeholder_steps ?? 0;
  const atLeast = placeholders > 0 ? '≥' : '';
  let text = `$(comment-discussion) ${turns}`;
  if (st.usage.output > 0) {
    text += ` · ${atLeast}${compact(st.usage.output)} out`;
  }
  if (inFlight) {
    text += ' · working';
  }
  // `usage_recorded: false`: the agent's file holds no token counts (Kiro CLI, Antigravity
  // CLI, …): "not recorded", never 0.
  const tokens =
    st.usage_recorded === false
      ? 'tokens not recorded (the file holds no token counts)'
      : `${atLeast}${n(st.usage.output)} output tokens · ${n(st.usage.input)} input · ${n(st.usage.cache_read)} cache read · ${n(st.usage.cache_creation)} cache write`;
  const tooltip = [
    `${turns} · ${n(st.steps)} model responses · ${n(st.tool_calls)} tool calls`,
    tokens,
    '(each model response counted once; the figures of `transcript-ls stats`)',
  ];
  if (placeholders > 0) {
    tooltip.push(`${placeholders} response(s) logged only a streaming placeholder output count: the true output is higher.`);
  }
  if (inFlight) {
    tooltip.push('The last turn is still in flight.');
  }
  return { text, tooltip: tooltip.join('\n') };
}

/** The exact totals of the transcript behind `doc` (server request `transcript/stats`); from a
 * server without that request, the turn count of the outline. */
async function statusText(c: LanguageClient, doc: vscode.TextDocument): Promise<{ text: string; tooltip: string } | undefined> {
  try {
    const st = await c.sendRequest<TranscriptStats>('transcript/stats', { uri: c.code2ProtocolConverter.asUri(doc.uri) });
    return statusFromStats(st);
  } catch (e: any) {
    if (e?.code !== -32601) {
      throw e; // not "method not found": a real error (e.g. not a transcript)
    }
  }
  const symbols = (await vscode.commands.executeCommand<vscode.DocumentSymbol[]>('vscode.executeDocumentSymbolProvider', doc.uri)) ?? [];
  const turns = symbols.filter((s) => /^Turn \d+/.test(s.name)).length;
  if (turns === 0) {
    return undefined;
  }
  const t = `${turns} turn${turns === 1 ? '' : 's'}`;
  return { text: `$(comment-discussion) ${t}`, tooltip: `${t} (from the outline; this server has no transcript/stats)` };
}
