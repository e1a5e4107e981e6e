import { useState } from 'react';
import { uploadFileWithProgress, type FileInfo } from '@profile-data/client';
import { unwrap, useApi } from '../../api';
import { ActionError, useAction, useConfirmedAction } from '../../ui/action';
import { Async, useLoad } from '../../ui/async';
import { Confirm } from '../../ui/confirm';
import { ListTable } from '../../ui/list-table';
import { FileDetail } from './file-detail';
import { Pager, bytes, pageOf, usePager, when } from './shared';

const PAGE = 20;

/** Files: upload with progress, the list page by page, and each file's preview, link and delete. */
export function FilesView() {
  const { client } = useApi();
  const pager = usePager();
  const [selected, setSelected] = useState<FileInfo | undefined>(undefined);
  const list = useLoad(
    (signal) => {
      const query = { limit: PAGE, ...(pager.after ? { after: pager.after } : {}) };
      return pageOf(client.GET('/files', { params: { query }, signal }));
    },
    [client, pager.after],
  );
  const remove = useConfirmedAction(async (file: FileInfo) => {
    await unwrap(client.DELETE('/files/{id}', { params: { path: { id: file.id } } }));
    if (selected?.id === file.id) setSelected(undefined);
    list.reload();
  });

  return (
    <section aria-labelledby="files-title">
      <h1 id="files-title">Files</h1>
      <Upload onUploaded={list.reload} />
      <h2>Stored files</h2>
      <ActionError error={remove.error} />
      <Async loaded={list}>
        {(page) => (
          <ListTable
            rows={page.list}
            rowKey={(file) => file.id}
            emptyText="No files yet."
            className="ops-table"
            columns={[
              { header: 'Name', className: 'file-name', cell: (file) => file.name },
              { header: 'Type', wideOnly: true, cell: (file) => file.contentType },
              { header: 'Size', cell: (file) => bytes(file.size) },
              { header: 'Uploaded', wideOnly: true, cell: (file) => when(file.createdAt) },
              {
                header: 'Actions',
                className: 'row-actions',
                cell: (file) => (
                  <>
                    <button
                      type="button"
                      aria-label={`Open ${file.name}`}
                      aria-pressed={selected?.id === file.id}
                      onClick={() => setSelected(file)}
                    >
                      Open
                    </button>
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Delete ${file.name}`}
                      onClick={() => remove.ask(file)}
                    >
                      Delete
                    </button>
                  </>
                ),
              },
            ]}
            footer={<Pager pager={pager} next={page.next} label="Files" />}
          />
        )}
      </Async>
      {selected && (
        <FileDetail key={selected.id} file={selected} onClose={() => setSelected(undefined)} />
      )}
      <Confirm {...remove.dialog} title="Delete the file?" confirmLabel="Delete file">
        <p>
          <span className="file-name">{remove.target?.name}</span> (
          {bytes(remove.target?.size ?? 0)}) is deleted for good, and its signed links stop working.
        </p>
      </Confirm>
    </section>
  );
}

/** Picks a file and uploads it, with a progress bar while its bytes go out. */
function Upload(props: { onUploaded: () => void }) {
  const { options } = useApi();
  const [chosen, setChosen] = useState<File | undefined>(undefined);
  const [progress, setProgress] = useState<{ sent: number; total: number } | undefined>();
  const [uploaded, setUploaded] = useState<FileInfo | undefined>(undefined);
  const upload = useAction(async (file: File) => {
    setUploaded(undefined);
    setProgress({ sent: 0, total: file.size });
    const stored = await uploadFileWithProgress(options, file, {
      name: file.name,
      onProgress: (sent, total) => setProgress({ sent, total }),
    });
    setUploaded(stored);
    props.onUploaded();
  });
  const percent =
    progress && progress.total > 0 ? Math.round((progress.sent / progress.total) * 100) : 0;
  return (
    <form
      className="panel"
      aria-labelledby="upload-title"
      onSubmit={(event) => {
        event.preventDefault();
        if (chosen) upload.run(chosen);
      }}
    >
      <h2 id="upload-title">Upload a file</h2>
      <div className="toolbar">
        <label htmlFor="upload-file">File to upload</label>
        <input
          id="upload-file"
          type="file"
          onChange={(event) => {
            setChosen(event.target.files?.[0]);
            setProgress(undefined);
            setUploaded(undefined);
          }}
        />
        <button type="submit" className="primary" disabled={!chosen || upload.busy}>
          {upload.busy ? 'Uploading…' : 'Upload'}
        </button>
      </div>
      {progress && (
        <div className="progress-row">
          <label htmlFor="upload-progress">Upload progress</label>
          <progress id="upload-progress" max={progress.total || 1} value={progress.sent}>
            {percent}%
          </progress>
          <span aria-live="polite">
            {bytes(progress.sent)} of {bytes(progress.total)} ({percent}%)
          </span>
        </div>
      )}
      {uploaded && (
        <p className="ok" role="status">
          Uploaded <span className="file-name">{uploaded.name}</span>.
        </p>
      )}
      <ActionError error={upload.error} />
    </form>
  );
}
