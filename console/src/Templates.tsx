import { api, type Template } from './api.ts';
import { Fields, FormCard, saveRecord, useForm } from './form.tsx';
import { ListScreen, usePicked, withNote } from './lists.tsx';
import { choicesOf, useLoad } from './ui.tsx';

type Named = { data: { id: number; name: string }[] };
const name = (t: { name: string }) => t.name;

/** Toplist templates: searched and paged on the server; create one, rename or retype one. */
export function TemplatesScreen() {
  const pick = usePicked<Template>('/templates');
  return (
    <ListScreen
      unit="template"
      pick={pick}
      search={{ id: 'template-search', label: 'Search templates', placeholder: 'name' }}
      empty="No templates."
      item={withNote((t) => t.productType)}
      newButton
      detail={(template) => <TemplateForm template={template} onSaved={pick.saved} />}
    />
  );
}

/** Creates a template (external id, product and classification type) or edits one. */
function TemplateForm({ template, onSaved }: { template?: Template; onSaved: (t: Template) => void }) {
  const products = useLoad(() => api<Named>('GET', '/product-types'), 'product-types');
  const classes = useLoad(() => api<Named>('GET', '/classification-types'), 'classification-types');
  const form = useForm({
    name: template?.name ?? '',
    externalId: template?.externalId ?? '',
    productTypeId: template ? String(template.productTypeId) : '',
    classificationTypeId: template ? String(template.classificationTypeId) : '',
  });
  const { f } = form;
  const productTypeId = f.productTypeId || String(products.data?.data[0]?.id ?? '');
  const classificationTypeId = f.classificationTypeId || String(classes.data?.data[0]?.id ?? '');
  const save = () =>
    form.run(() =>
      saveRecord(
        { unit: 'template', path: '/templates', record: template, onSaved },
        {
          name: f.name.trim(),
          productTypeId: Number(productTypeId),
          classificationTypeId: Number(classificationTypeId),
        },
        { externalId: f.externalId.trim() || null },
      ),
    );
  return (
    <FormCard
      id="template-heading"
      record={{ unit: 'template', name: template?.name }}
      form={form}
      specs={[
        { key: 'name', id: 'template-name', label: 'Name' },
        ...(template
          ? []
          : [{ key: 'externalId' as const, id: 'template-external', label: 'External id (optional)' }]),
      ]}
      shown={['productTypeId', 'classificationTypeId']}
      onSubmit={save}
      // Until both lists have loaded there is no type to send: a click then would only earn a 422.
      disabled={!productTypeId || !classificationTypeId}
    >
      <Fields
        specs={[
          {
            key: 'productTypeId',
            id: 'template-product',
            label: 'Product type',
            options: choicesOf(products, name),
          },
          {
            key: 'classificationTypeId',
            id: 'template-class',
            label: 'Classification type',
            options: choicesOf(classes, name),
          },
        ]}
        f={{ ...f, productTypeId, classificationTypeId }}
        set={form.set}
        outcome={form.outcome}
      />
    </FormCard>
  );
}
