train_ds = hub.load("hub://activeloop/tiny-imagenet-train")
train_loader = train_ds.pytorch(num_workers=args.num_workers, tensors=["images", "labels"], batch_size=batch_size, shuffle=True, transform={'images': train_transform, 'labels': None}, use_local_cache=True)
test_ds = hub.load("hub://activeloop/tiny-imagenet-validation")
test_loader = test_ds.pytorch(num_workers=args.num_workers, tensors=["images", "labels"], batch_size=batch_size, shuffle=False, transform={'images': test_transform, 'labels': None}, use_local_cache=True)

...

pbar = tqdm(train_loader, total=len(train_loader),
        desc=f"Train Epo {epoch} Lr {optimizer.param_groups[0]['lr']:.1e}", ncols=100)
for i, (x, y) in enumerate(pbar):
