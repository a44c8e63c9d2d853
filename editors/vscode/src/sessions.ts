// Sessions first (issue 7): the "Transcripts" tree (sessions by project, newest first, sub-agents
// under their parent), "Transcript: Open Session…", "Transcript: Open Latest Session for This
// Workspace", and the `transcript-ls.openAs` behaviour (a transcript opens as its view). All
// data comes from the server's `transcript/sessions` request (server/PROTOCOL.md).
import * as path from 'path';
import * as vscode from 'vscode';
import { LanguageClient, State } from 'vscode-languageclient/node';
import { marks, waitingText } from './unseen';

/** One session as `transcript/sessions` returns it. */
export interface Session {
  uri: string;
  format: string;
  title: string;
  titleSource: string;
  firstPrompt?: string | null;
  project?: string | null;
  started?: string | null;
  ended?: string | null;
  turns: number;
  bytes: number;
  live: boolean;
  /** Why the session waits for the user (issue 23 item 10), else null. */
  waiting?: { kind: string; detail: string; turn: number; line: number } | null;
  parent?: string | null;
  children: string[];
}

export type OpenAs = 'view' | 'raw' | 'both';

/** Hooks into extension.ts (kept as functions so this file stays self-contained). */
export interface Host {
  client(): LanguageClient | undefined;
  /** Opens the rendered view of a transcript file (titled by `title` when given). */
  openView(uri: vscode.Uri, title?: string, column?: vscode.ViewColumn): Promise<void>;
  log(msg: string): void;
  /** True when the session has output the user has not seen (unseen.ts). */
  isUnseen?(s: Session): boolean;
  /** Called with every list loaded and whether it is complete (unseen.ts takes the first
   * complete one as seen). */
  noteList?(list: Session[], complete: boolean): Promise<void>;
}

/** `3h ago`, `2d ago`, `just now`. */
export function relativeTime(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) {
    return '';
  }
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) {
    return 'just now';
  }
  const steps: [number, string][] = [
    [60, 'm'],
    [3600, 'h'],
    [86400, 'd'],
    [86400 * 30, 'mo'],
    [86400 * 365, 'y'],
  ];
  let label = '';
  for (const [secs, unit] of steps) {
    if (s >= secs) {
      label = `${Math.floor(s / secs)}${unit} ago`;
    }
  }
  return label;
}

/** `3h ago · 12 turns` (+ ` · ● live`, ` · ⏸ waiting for you: question`, ` · ● new`). */
export function sessionDescription(s: Session, now = Date.now(), unseen = false): string {
  const parts = [relativeTime(s.ended ?? s.started, now), turnsText(s.turns)].filter((p) => p);
  if (s.live) {
    parts.push('● live');
  }
  parts.push(...marks(s, unseen));
  return parts.join(' · ');
}

export function openAs(): OpenAs {
  const v = vscode.workspace.getConfiguration('transcript-ls').get<string>('openAs');
  return v === 'raw' || v === 'both' ? v : 'view';
}

/** Whether the last list fetched was complete (`complete` of `transcript/sessions`). */
let listComplete = false;

async function fetchSessions(c: LanguageClient | undefined, params: Record<string, unknown>): Promise<Session[] | undefined> {
  if (!c || c.state !== State.Running) {
    return undefined;
  }
  const r = await c.sendRequest<{ sessions: Session[]; complete?: boolean }>('transcript/sessions', params);
  listComplete = r?.complete !== false;
  return r?.sessions ?? [];
}

// ---- tree ------------------------------------------------------------------------------------

type Node = { kind: 'project'; project: string; sessions: Session[] } | { kind: 'session'; session: Session; children: Session[] };

/** The tree group of sessions that name no folder. */
const NO_PROJECT = '(no project)';

export class SessionTree implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private sessions: Session[] = [];
  private byUri = new Map<string, Session>();
  /** Project folder → its tree label ([`projectLabels`]), made with the top level. */
  private labels = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  view: vscode.TreeView<Node> | undefined;

  constructor(private readonly host: Host) {
    // Live sessions and new ones show up without a manual refresh.
    this.timer = setInterval(() => {
      if (this.view?.visible) {
        void this.refresh();
      }
    }, 10000);
  }

  async refresh(): Promise<void> {
    try {
      const list = await fetchSessions(this.host.client(), { limit: 2000 });
      if (list) {
        await this.host.noteList?.(list, listComplete);
        this.sessions = list;
        this.byUri = new Map(list.map((s) => [s.uri, s]));
        if (this.view) {
          this.view.message = list.length === 0 ? 'No transcripts found under the configured roots (setting transcript.roots).' : undefined;
          // Sessions waiting for the user, on the view's icon (issue 23 item 10).
          const waiting = list.filter((s) => s.waiting).length;
          this.view.badge = waiting > 0 ? { value: waiting, tooltip: `${waiting} session${waiting === 1 ? '' : 's'} waiting for you` } : undefined;
        }
      }
    } catch (e) {
      this.host.log(`transcript/sessions: ${e}`);
    }
    this.emitter.fire(undefined);
  }

  /** Draws the tree again from the list it has (what the user has seen changed). */
  redraw(): void {
    this.emitter.fire(undefined);
  }

  /** Sessions loaded so far (for tests and commands). */
  all(): Session[] {
    return this.sessions;
  }

  /** The title of the session in file `uri` (reloading the list once when it is not known). */
  async titleOf(uri: vscode.Uri): Promise<string | undefined> {
    const key = uri.toString();
    let s = this.sessions.find((x) => x.uri === key);
    if (!s) {
      await this.refresh();
      s = this.sessions.find((x) => x.uri === key);
    }
    return s?.title;
  }

  getChildren(node?: Node): Node[] {
    if (!node) {
      // Top level: projects, the one with the most recent session first.
      const groups = new Map<string, Session[]>();
      for (const s of this.sessions) {
        if (s.parent && this.byUri.has(s.parent)) {
          continue; // shown under its parent
        }
        const p = s.project || NO_PROJECT;
        groups.set(p, [...(groups.get(p) ?? []), s]);
      }
      this.labels = projectLabels([...groups.keys()].filter((p) => p !== NO_PROJECT));
      return [...groups.entries()].map(([project, sessions]) => ({ kind: 'project' as const, project, sessions }));
    }
    if (node.kind === 'project') {
      return node.sessions.map((s) => this.sessionNode(s));
    }
    return node.children.map((s) => this.sessionNode(s));
  }

  private sessionNode(s: Session): Node {
    const children = s.children.map((u) => this.byUri.get(u)).filter((c): c is Session => !!c);
    return { kind: 'session', session: s, children };
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'project') {
      const none = node.project === NO_PROJECT;
      const label = none ? NO_PROJECT : this.labels.get(node.project) ?? (path.basename(node.project) || node.project);
      const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.Expanded);
      // The full folder beside a label that does not already say all of it.
      item.description = none || label === node.project ? undefined : node.project;
      item.tooltip = `${node.project}\n${node.sessions.length} session${node.sessions.length === 1 ? '' : 's'}`;
      item.iconPath = new vscode.ThemeIcon('folder');
      item.contextValue = 'transcriptProject';
      item.id = `project:${node.project}`;
      return item;
    }
    const s = node.session;
    const item = new vscode.TreeItem(s.title, node.children.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    item.id = s.uri;
    const unseen = this.host.isUnseen?.(s) ?? false;
    if (unseen) {
      // Highlighted whole, as mail clients show unread items: visible even when a narrow side
      // bar cuts the description (issue 23 item 10).
      item.label = { label: s.title, highlights: [[0, s.title.length]] };
    }
    item.description = sessionDescription(s, Date.now(), unseen);
    const md = new vscode.MarkdownString();
    md.appendText(s.title);
    md.appendMarkdown('\n\n');
    const wait = waitingText(s);
    if (wait) {
      md.appendText(`${wait}\n`);
    }
    if (unseen) {
      md.appendText('New output since you last looked\n');
    }
    md.appendText(`${s.format} · ${turnsText(s.turns)} · ${sizeText(s.bytes)}${s.live ? ' · live' : ''}\n`);
    md.appendText(`${s.project ?? ''}\n${s.started ?? ''} → ${s.ended ?? ''}\n${vscode.Uri.parse(s.uri).fsPath}`);
    item.tooltip = md;
    item.iconPath = s.waiting
      ? new vscode.ThemeIcon('debug-pause', new vscode.ThemeColor('charts.orange'))
      : new vscode.ThemeIcon(s.live ? 'circle-filled' : s.parent ? 'hubot' : 'comment-discussion', s.live ? new vscode.ThemeColor('charts.green') : undefined);
    item.contextValue = 'transcriptSession';
    item.resourceUri = vscode.Uri.parse(s.uri);
    item.command = { command: 'transcript-ls.session.open', title: 'Open', arguments: [node] };
    return item;
  }

  dispose(): void {
    if (this.timer) {
      clearInterval(this.timer);
    }
    this.emitter.dispose();
  }
}

/** The session a command got: a tree node, a URI, or the selected tree item. */
function sessionOf(tree: SessionTree, arg: unknown): Session | undefined {
  const a = arg as any;
  if (a?.kind === 'session') {
    return a.session;
  }
  if (a instanceof vscode.Uri) {
    return tree.all().find((s) => s.uri === a.toString()) ?? { uri: a.toString(), title: path.basename(a.fsPath) } as Session;
  }
  const sel = tree.view?.selection?.[0];
  return sel?.kind === 'session' ? sel.session : undefined;
}

/** Opens a session as `openAs` says (or as asked). */
export async function openSession(host: Host, s: Session, how: OpenAs = openAs()): Promise<void> {
  const file = vscode.Uri.parse(s.uri);
  if (how === 'raw' || how === 'both') {
    rawRequested.add(file.toString());
    await vscode.window.showTextDocument(file, { preview: false });
  }
  if (how === 'view' || how === 'both') {
    await host.openView(file, s.title, how === 'both' ? vscode.ViewColumn.Beside : undefined);
  }
}

/** Files the user asked to see raw (the automatic switch to the view leaves them alone). */
export const rawRequested = new Set<string>();

/** Labels for project folders that tell them apart, as editor tabs do (issue 23 item 7): each
 * folder's last segment, with as many parent segments as it takes to differ from every other
 * folder of `projects` that ends the same (`a/cwd`, `b/cwd`). */
export function projectLabels(projects: Iterable<string>): Map<string, string> {
  const all = [...new Set(projects)];
  const parts = new Map<string, string[]>(all.map((p) => [p, p.split(/[\\/]+/).filter((x) => x)]));
  const depth = new Map<string, number>(all.map((p) => [p, 1]));
  const label = (p: string) => {
    const segs = parts.get(p) ?? [];
    return segs.length ? segs.slice(-(depth.get(p) ?? 1)).join('/') : p;
  };
  for (let round = 0; round < 64; round++) {
    const byLabel = new Map<string, string[]>();
    for (const p of all) {
      byLabel.set(label(p), [...(byLabel.get(label(p)) ?? []), p]);
    }
    let grew = false;
    for (const same of byLabel.values()) {
      if (same.length < 2) continue;
      for (const p of same) {
        if ((depth.get(p) ?? 1) < (parts.get(p)?.length ?? 0)) {
          depth.set(p, (depth.get(p) ?? 1) + 1);
          grew = true;
        }
      }
    }
    if (!grew) break;
  }
  return new Map(all.map((p) => [p, label(p)] as const));
}

/** `1 turn`, `12 turns`. */
export function turnsText(n: number): string {
  return `${n} turn${n === 1 ? '' : 's'}`;
}

/** A file size for people: `812 B`, `3.4 KB`, `12.0 MB` (never `0.0 MB`). */
export function sizeText(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1e6) return `${(bytes / 1e3).toFixed(1)} KB`;
  if (bytes < 1e9) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${(bytes / 1e9).toFixed(2)} GB`;
}

// ---- quick pick, latest ----------------------------------------------------------------------

interface SessionPick extends vscode.QuickPickItem {
  session: Session;
}

export function pickItem(s: Session, now = Date.now(), labels?: Map<string, string>, unseen = false): SessionPick {
  const project = s.project ? labels?.get(s.project) ?? path.basename(s.project) : '';
  return {
    label: s.waiting ? `$(debug-pause) ${s.title}` : s.live ? `$(circle-filled) ${s.title}` : s.title,
    description: [project, sessionDescription(s, now, unseen)].filter((p) => p).join(' · '),
    detail: waitingText(s) ?? (s.firstPrompt && s.firstPrompt !== s.title ? s.firstPrompt : undefined),
    session: s,
  };
}

async function quickPickSession(host: Host): Promise<void> {
  const qp = vscode.window.createQuickPick<SessionPick>();
  qp.title = 'Open Transcript Session';
  qp.placeholder = 'Type part of a session title, first prompt or project';
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.busy = true;
  qp.show();
  try {
    const list = await fetchSessions(host.client(), { limit: 2000 });
    if (!list) {
      qp.hide();
      void vscode.window.showWarningMessage('Transcript LS: the server is not running.');
      return;
    }
    const now = Date.now();
    const labels = projectLabels(list.flatMap((s) => (s.project ? [s.project] : [])));
    await host.noteList?.(list, listComplete);
    qp.items = list.map((s) => pickItem(s, now, labels, host.isUnseen?.(s) ?? false));
    qp.busy = false;
    if (list.length === 0) {
      qp.placeholder = 'No transcripts found under the configured roots (setting transcript.roots)';
    }
  } catch (e) {
    qp.hide();
    void vscode.window.showErrorMessage(`Transcript LS: cannot list sessions: ${e}`);
    return;
  }
  const picked = await new Promise<SessionPick | undefined>((resolve) => {
    qp.onDidAccept(() => resolve(qp.selectedItems[0]));
    qp.onDidHide(() => resolve(undefined));
  });
  qp.dispose();
  if (picked) {
    await openSession(host, picked.session);
  }
}

/** The newest session whose project is one of the workspace folders (or below one). */
export async function latestForWorkspace(host: Host): Promise<Session | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  let best: Session | undefined;
  for (const f of folders) {
    const list = await fetchSessions(host.client(), { project: f.uri.fsPath, limit: 1 });
    const s = list?.[0];
    if (s && (!best || (s.ended ?? '') > (best.ended ?? ''))) {
      best = s;
    }
  }
  return best;
}

async function openLatest(host: Host): Promise<void> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 0) {
    void vscode.window.showInformationMessage('Transcript LS: open a folder first; the latest session is the newest one recorded in it.');
    return;
  }
  const s = await latestForWorkspace(host);
  if (!s) {
    void vscode.window.showInformationMessage(`Transcript LS: no session recorded in ${folders.map((f) => f.uri.fsPath).join(', ')}.`);
    return;
  }
  await openSession(host, s);
}

// ---- open as view by default -----------------------------------------------------------------

/** True when the server reads the file `uri` as a transcript (it has turns). Asked with the
 * server's `transcript/stats`, straight from the extension host (issue 12): the outline command
 * (`vscode.executeDocumentSymbolProvider`) went through the workbench, busy laying out the file
 * just opened, and cost about a second of the time to the view. `InvalidParams` is the server's
 * "not a transcript"; a server without `transcript/stats` is asked for the outline. */
export async function isTranscript(c: LanguageClient, uri: vscode.Uri): Promise<boolean> {
  try {
    const st = await c.sendRequest<{ turns?: number }>('transcript/stats', { uri: c.code2ProtocolConverter.asUri(uri) });
    return (st?.turns ?? 0) > 0;
  } catch (e) {
    if ((e as { code?: number })?.code === -32602) {
      return false;
    }
    const symbols = (await vscode.commands.executeCommand<vscode.DocumentSymbol[]>('vscode.executeDocumentSymbolProvider', uri)) ?? [];
    return symbols.some((s) => /^Turn \d+/.test(s.name));
  }
}

/** When a transcript `.jsonl` becomes the active editor and `openAs` is `view` or `both`, shows
 * its view (`view`: in place of the raw tab). Runs once per opening of the file (again after its
 * last raw tab closed), and not while it is open through "Open Raw JSONL". Acts as soon as the raw tab opens (issue 12: VS Code
 * hands a big file's text to extensions seconds after showing it, and the view needs only the
 * file on disk), and again when the editor becomes active (a tab event can be missed). */
class OpenAsView implements vscode.Disposable {
  private readonly done = new Set<string>();
  private readonly subs: vscode.Disposable[];

  constructor(private readonly host: Host, private readonly tree: SessionTree) {
    this.subs = [
      vscode.window.onDidChangeActiveTextEditor((ed) => void this.check(ed)),
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        for (const tab of [...e.opened, ...e.changed]) {
          if (tab.isActive && tab.input instanceof vscode.TabInputText) {
            void this.checkUri(tab.input.uri, tab.group.viewColumn);
          }
        }
        // Once no tab shows a file raw, its next open is a first one again (issue 23 item 1:
        // a transcript opened as its view only the first time per window; "Open Raw JSONL"
        // kept it raw for good).
        for (const tab of e.closed) {
          if (tab.input instanceof vscode.TabInputText) {
            const key = tab.input.uri.toString();
            if (!this.rawTabOpen(key)) {
              this.done.delete(key);
              rawRequested.delete(key);
            }
          }
        }
      }),
    ];
  }

  /** True while some tab (any group) shows the file `key` as text. */
  private rawTabOpen(key: string): boolean {
    return vscode.window.tabGroups.all.some((g) =>
      g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === key));
  }

  async check(ed: vscode.TextEditor | undefined): Promise<void> {
    if (ed) {
      await this.checkUri(ed.document.uri, ed.viewColumn);
    }
  }

  private async checkUri(uri: vscode.Uri, column: vscode.ViewColumn | undefined): Promise<void> {
    const how = openAs();
    if (how === 'raw') {
      return;
    }
    const key = uri.toString();
    if (uri.scheme !== 'file' || !uri.path.endsWith('.jsonl') || this.done.has(key) || rawRequested.has(key)) {
      return;
    }
    const c = this.host.client();
    if (!c || c.state !== State.Running) {
      return; // checked again once the server runs
    }
    this.done.add(key);
    try {
      if (!(await isTranscript(c, uri))) {
        return;
      }
    } catch (e) {
      this.host.log(`open as view: ${e}`);
      return;
    }
    const title = await this.tree.titleOf(uri);
    if (how === 'view') {
      // The raw tab in the editor group it opened in gives way to the view.
      const group = vscode.window.tabGroups.all.find((g) => g.viewColumn === column) ?? vscode.window.tabGroups.activeTabGroup;
      const raw = group.tabs.find((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === key);
      await this.host.openView(uri, title, column);
      if (raw) {
        await vscode.window.tabGroups.close(raw, true);
      }
    } else {
      await this.host.openView(uri, title, vscode.ViewColumn.Beside);
    }
  }

  dispose(): void {
    this.subs.forEach((d) => d.dispose());
  }
}

// ---- registration ----------------------------------------------------------------------------

export function register(ctx: vscode.ExtensionContext, host: Host): SessionTree {
  const tree = new SessionTree(host);
  tree.view = vscode.window.createTreeView('transcript-ls.sessions', { treeDataProvider: tree, showCollapseAll: true });
  const openAsView = new OpenAsView(host, tree);
  ctx.subscriptions.push(tree, tree.view, openAsView);
  tree.view.onDidChangeVisibility((e) => {
    if (e.visible) {
      void tree.refresh();
    }
  });
  const command = (id: string, fn: (...args: any[]) => unknown) => ctx.subscriptions.push(vscode.commands.registerCommand(id, fn));
  command('transcript-ls.sessions.refresh', () => tree.refresh());
  command('transcript-ls.openSession', () => quickPickSession(host));
  command('transcript-ls.openLatestSession', () => openLatest(host));
  command('transcript-ls.session.open', async (arg?: unknown) => {
    const s = sessionOf(tree, arg);
    if (s) {
      await openSession(host, s);
    }
  });
  command('transcript-ls.session.openRaw', async (arg?: unknown) => {
    const s = sessionOf(tree, arg);
    if (s) {
      await openSession(host, s, 'raw');
    }
  });
  command('transcript-ls.session.copyPath', async (arg?: unknown) => {
    const s = sessionOf(tree, arg);
    if (s) {
      await vscode.env.clipboard.writeText(vscode.Uri.parse(s.uri).fsPath);
      vscode.window.setStatusBarMessage('Transcript: path copied', 2000);
    }
  });
  command('transcript-ls.session.reveal', async (arg?: unknown) => {
    const s = sessionOf(tree, arg);
    if (s) {
      await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.parse(s.uri));
    }
  });
  // Check the editor that was already active when the extension started.
  setTimeout(() => void openAsView.check(vscode.window.activeTextEditor), 0);
  (tree as any).openAsView = openAsView;
  return tree;
}

/** Runs the open-as-view check now (after the server started). */
export function recheckActive(tree: SessionTree): void {
  void (tree as any).openAsView?.check(vscode.window.activeTextEditor);
}
