import { Fragment, type ReactNode } from 'react';
import { Empty } from './async';

/** One column of a list: its header, and what each row shows in it. */
export interface Column<T> {
  /** The header cell's content (a `visually-hidden` span for a column that needs no caption). */
  header: ReactNode;
  /** What a row shows in this column: a `<td>`, or the row's header (`<th scope="row">`). */
  cell: (row: T) => ReactNode;
  rowHeader?: boolean;
  /** The class of the column's cells (not its header). */
  className?: string;
  /** Left out on a narrow screen, header and cells (what it says is shown elsewhere too). */
  wideOnly?: boolean;
}

/** The cells: each column's, or a row of its own (a component with its own state). */
type Body<T> =
  | { columns: readonly Column<T>[]; row?: never }
  | { columns: readonly Pick<Column<T>, 'header' | 'wideOnly'>[]; row: (row: T) => ReactNode };

/**
 * A list as a table: a header row and a row per entry, in a wrapper that scrolls sideways on a
 * small screen. No rows show `emptyText` instead (nothing when there is none); `footer` (a pager)
 * follows the rows. Every cell is text React escapes: a stored value never becomes markup.
 */
export function ListTable<T>(
  props: Body<T> & {
    rows: readonly T[];
    rowKey: (row: T) => string;
    emptyText?: string;
    /** The table's class: `ops-table`, `wide` (readable columns that scroll), `items wide`. */
    className?: string;
    /** A caption; a hidden one is for screen readers only. */
    caption?: { text: string; hidden?: boolean };
    /** The table's accessible name, when it has no caption. */
    label?: string;
    /** Makes the wrapper a labelled region that the keyboard can scroll (wide tables). */
    region?: string;
    footer?: ReactNode;
  },
) {
  const { rows, rowKey } = props;
  if (rows.length === 0)
    return props.emptyText === undefined ? null : <Empty text={props.emptyText} />;
  const region = props.region
    ? { tabIndex: 0, role: 'region', 'aria-label': props.region }
    : undefined;
  return (
    <>
      <div className="table-wrap" {...region}>
        <table className={props.className} aria-label={props.label}>
          {props.caption && (
            <caption className={props.caption.hidden ? 'visually-hidden' : undefined}>
              {props.caption.text}
            </caption>
          )}
          <thead>
            <tr>
              {props.columns.map((column, at) => (
                <th scope="col" key={at} className={column.wideOnly ? 'wide-only' : undefined}>
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.row
              ? rows.map((row) => <Fragment key={rowKey(row)}>{props.row(row)}</Fragment>)
              : rows.map((row) => (
                  <tr key={rowKey(row)}>
                    {props.columns.map((column, at) => cellOf(column, row, at))}
                  </tr>
                ))}
          </tbody>
        </table>
      </div>
      {props.footer}
    </>
  );
}

function cellOf<T>(column: Column<T>, row: T, at: number): ReactNode {
  const className = column.wideOnly
    ? [column.className, 'wide-only'].filter((each) => each !== undefined).join(' ')
    : column.className;
  const Cell = column.rowHeader ? 'th' : 'td';
  return (
    <Cell key={at} scope={column.rowHeader ? 'row' : undefined} className={className}>
      {column.cell(row)}
    </Cell>
  );
}
